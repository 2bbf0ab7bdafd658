/* test_cfg.c: the simulation config: values, defaults, every error class. */
#include "harness.h"

#include "cfg.h"
#include "jx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SMALL "tests/data/small.json"

static void loads_small(void)
{
	struct cfg c;
	struct err e;

	if (cfg_load(&c, SMALL, NULL, 0, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	CHECK(!strcmp(c.name, "small") && c.seed == 7);
	CHECK(c.n_groups == 2);
	CHECK(c.groups[0].count == 3 && c.groups[1].count == 1);
	CHECK(c.groups[0].proto.kind == PROTO_ASYNC);
	CHECK(c.groups[0].proto.gamma == 4 && c.groups[0].proto.window == 3);
	CHECK(c.groups[1].proto.kind == PROTO_SYNC);
	CHECK(c.groups[1].proto.gamma == 6 && c.groups[1].proto.window == 1);
	CHECK(c.groups[0].accept.model == ACCEPT_IID &&
	      c.groups[0].accept.alpha == 0.8);
	CHECK(c.groups[1].accept.model == ACCEPT_MARKOV);
	CHECK(c.groups[0].wan.rtt_s.kind == DIST_LOGNORMAL);
	CHECK_NEAR(dist_mean(&c.groups[0].wan.rtt_s), 0.06, 1e-12);
	CHECK(c.groups[1].wan.up_bps == 50e6 && c.groups[1].wan.down_bps == 50e6);
	CHECK(c.cloud.replicas == 2 && c.cloud.policy == SCHED_CONTINUOUS);
	CHECK(!strcmp(c.cloud.model.name, "llama2-7b"));
	/* default KV capacity: (0.9 x 80 GB - 0.35 GB of activations - 2 B x
	 * 6.74e9) / (2 B x 2 x 32 x 4096), whole blocks of 16 */
	CHECK(c.cloud.kv_capacity_tokens > 110000 &&
	      c.cloud.kv_capacity_tokens < 112000 &&
	      c.cloud.kv_capacity_tokens % 16 == 0);
	cfg_release(&c);
}

/* The resolved document states every default, and reads back to itself. */
static void resolved_is_complete(void)
{
	struct cfg c, c2;
	struct err e;
	char *text, *text2;
	const char *p;

	CHECK(cfg_load(&c, SMALL, NULL, 0, &e) == 0);
	text = cfg_resolved(&c);
	CHECK(strstr(text, "\"max_batch_tokens\": 4096") != NULL);
	CHECK(strstr(text, "\"header_bytes\": 66") != NULL);
	CHECK(strstr(text, "\"horizon_s\": 0") != NULL);
	/* the group without a protocol got a copy of the top-level one */
	CHECK(json_integer_value(json_object_get(json_object_get(
		json_array_get(json_object_get(c.doc, "tenants"), 0),
		"protocol"), "window")) == 3);
	p = t_write("resolved.json", text);
	CHECK(cfg_load(&c2, p, NULL, 0, &e) == 0);
	text2 = cfg_resolved(&c2);
	CHECK_MSG(!strcmp(text, text2), "resolving twice changed the document");
	free(text);
	free(text2);
	cfg_release(&c);
	cfg_release(&c2);
}

static void overrides(void)
{
	const char *sets[] = { "/cloud/replicas=5", "/tenants/1/count=4",
			       "/protocol/gamma=8" };
	struct cfg c;
	struct err e;

	CHECK(cfg_load(&c, SMALL, sets, 3, &e) == 0);
	CHECK(c.cloud.replicas == 5 && c.groups[1].count == 4);
	CHECK(c.groups[0].proto.gamma == 8); /* inherited after the override */
	CHECK(c.groups[1].proto.gamma == 6);
	cfg_release(&c);
	/* a bad value an override gave is said to come from it */
	{
		const char *bad[] = { "/cloud/replicas=0" };

		CHECK(cfg_load(&c, SMALL, bad, 1, &e) < 0);
		CHECK_MSG(strstr(e.msg, SMALL ": /cloud/replicas: expected") &&
			  strstr(e.msg, "got 0 (from --set /cloud/replicas=0)"),
			  "%s", e.msg);
	}
	/* an error above the pointer --set gave says it is below; a caller
	 * that places its overrides itself gets no such words */
	{
		const char *bad[] = { "/tenants/0/workload/output_tokens=1e9" };

		CHECK(cfg_load(&c, SMALL, bad, 1, &e) < 0);
		CHECK_MSG(strstr(e.msg, SMALL ": /tenants/0/workload: its "
				 "longest request") &&
			  strstr(e.msg, "(with --set /tenants/0/workload/"
				 "output_tokens=1e9)"), "%s", e.msg);
		CHECK(cfg_load_from(&c, SMALL, bad, 1, NULL, &e) < 0);
		CHECK_MSG(!strstr(e.msg, "--set"), "%s", e.msg);
	}
	/* a key with a ':' in it too */
	{
		const char *bad[] = { "/cloud/a:b=1" };

		CHECK(cfg_load(&c, SMALL, bad, 1, &e) < 0);
		CHECK_MSG(strstr(e.msg, "(from --set /cloud/a:b=1)"), "%s", e.msg);
	}
	/* and one inside an object appended with "-" */
	{
		const char *bad[] = { "/tenants/-={\"protocol\": {\"kind\": \"x\"}}" };

		CHECK(cfg_load(&c, SMALL, bad, 1, &e) < 0);
		CHECK_MSG(strstr(e.msg, "/protocol/kind: expected") &&
			  strstr(e.msg, "(from --set /tenants/-="), "%s", e.msg);
	}
	/* the config's protocol made by an override keeps the default kind */
	{
		const char *g[] = { "/protocol/gamma=8" };
		const char *path = t_write("np.json", "{\"tenants\": [{"
			"\"device\": {\"draft_base_s\": 0.01, "
			"\"prefill_per_token_s\": 0.001}, \"workload\": "
			"{\"prompt_tokens\": 8, \"output_tokens\": 8}, "
			"\"acceptance\": {\"alpha\": 0.7}, "
			"\"wan\": {\"rtt_s\": 0.05}}]}");

		CHECK_MSG(cfg_load(&c, path, g, 1, &e) == 0, "%s", e.msg);
		CHECK(c.groups[0].proto.kind == PROTO_ASYNC &&
		      c.groups[0].proto.gamma == 8);
		cfg_release(&c);
	}
	/* and a group's own, the config's kind */
	{
		const char *g[] = { "/protocol/kind=sync",
				    "/tenants/0/protocol/gamma=5" };

		CHECK_MSG(cfg_load(&c, SMALL, g, 2, &e) == 0, "%s", e.msg);
		CHECK(c.groups[0].proto.kind == PROTO_SYNC &&
		      c.groups[0].proto.gamma == 5 && c.groups[0].own_protocol);
		cfg_release(&c);
	}
}

struct bad_case {
	const char *set, *want;
};

static void bad_values(void)
{
	static const struct bad_case cases[] = {
		{ "/cloud/max_batch_tokens=-3", SMALL ": /cloud/max_batch_tokens: "
		  "expected an integer in [1, 16777216], got -3" },
		{ "/tenants/0/wan/rtt_s=\"fast\"", SMALL ": /tenants/0/wan/rtt_s: "
		  "expected a distribution object or a number > 0, got \"fast\"" },
		{ "/tenants/0/acceptance/alpha=1.5", "/tenants/0/acceptance/alpha: "
		  "expected a number in [0, 1], got 1.5" },
		{ "/protocol/window=0", SMALL ": /protocol/window: expected an "
		  "integer in [1, 1024], got 0" },
		{ "/tenants/1/protocol/gamma=0", "/tenants/1/protocol/gamma: "
		  "expected an integer in [1, 64], got 0" },
		{ "/protocol/kind=\"fast\"", "/protocol/kind: expected one of "
		  "\"edge_only\", \"cloud_only\", \"sync\", \"async\", "
		  "\"cloud_spec\", got \"fast\"" },
		{ "/cloud/replcas=2", "/cloud/replcas: unknown key \"replcas\"" },
		{ "/tenants/0/wan/rtt=0.05", "/tenants/0/wan/rtt: unknown key" },
		{ "/seed=\"x\"", "/seed: expected an integer >= 0, got \"x\"" },
		{ "/tenants=[]", "/tenants: expected a non-empty array of tenant "
		  "groups, got []" },
		{ "/tenants/1/name=\"phones\"", "/tenants/1/name: group name "
		  "\"phones\" is used twice" },
		{ "/tenants/0/workload/arrival=\"poisson\"", "/tenants/0/workload: "
		  "missing required key \"rate_per_s\"" },
		{ "/tenants/0/acceptance/model=\"trace\"", "/tenants/0/acceptance"
		  "/alpha: unknown key \"alpha\"" },
		{ "/tenants/0/wan/loss=1", "/tenants/0/wan/loss: expected a number "
		  "in [0, 1), got 1" },
		{ "/tenants/0/wan/up_bps=1e-300", "/tenants/0/wan/up_bps: expected "
		  "a number >= 1, got 1e-300" },
		{ "/tenants/0/wan/blackout={\"at_s\": 1, \"for_s\": 0}",
		  "/tenants/0/wan/blackout/for_s: expected a number in (0, 1e+09], got 0" },
		{ "/tenants/0/wan/blackout={\"at_s\": 1}",
		  "/tenants/0/wan/blackout: missing required key \"for_s\"" },
		{ "/cloud/gpu/preset=\"H300\"", "/cloud/gpu/preset: expected one "
		  "of \"H100-SXM\", \"H100-PCIe\", \"H200\", \"B200\", "
		  "\"A100-80G\", \"A100-40G\", \"A40\", \"L40S\", \"L4\", \"RTX-4090\", "
		  "\"MI300X\", got \"H300\"" },
		{ "/tenants/0/device/draft_base_s=0", "/tenants/0/device/"
		  "draft_base_s: expected a number in (0, 1e+09], got 0" },
		{ "/tenants/0/wan/stack_s=-0.001", "/tenants/0/wan/stack_s: "
		  "expected a number in [0, 1e+09], got -0.001" },
		{ "/tenants/0/device/wake={\"idle_s\": [0.01, 0.005], "
		  "\"extra_s\": [0, 0]}", "/tenants/0/device/wake/idle_s/1: "
		  "expected a number >= 0, greater than the one before, got 0.005" },
		{ "/cloud/gpu/wake={\"idle_s\": [0.01, 0.02], \"extra_s\": [0]}",
		  "/cloud/gpu/wake/extra_s: expected 2 numbers, one an idle_s, "
		  "got [0]" },
		{ "/cloud/gpu/wake={\"idle_s\": [0.01]}", "/cloud/gpu/wake: "
		  "missing required key \"extra_s\"" },
		{ "/cloud/gpu/table=\"missing.json\"",
		  "/tests/data/missing.json'" }, /* absolute: cwd's */
		{ "/tenants/0/wan/rtt_s={\"dist\":\"empirical\",\"file\":\"no.txt\"}",
		  "/tests/data/no.txt': No such file" },
		{ "/cloud/gpu_memory_utilization=0.1", "/cloud: no KV cache "
		  "fits: 1 x 80.0 GB x 0.1 (gpu_memory_utilization)" },
		{ "nopointer", "--set 'nopointer': expected POINTER=VALUE" },
		{ "/tenants/9/count=1", "--set '/tenants/9/count': the pointer "
		  "does not name a place" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg c;
		struct err e = { "" };
		const char *set = cases[i].set;

		if (cfg_load(&c, SMALL, &set, 1, &e) == 0) {
			CHECK_MSG(0, "--set %s was accepted", set);
			cfg_release(&c);
			continue;
		}
		CHECK_MSG(strstr(e.msg, cases[i].want), "--set %s: message "
			  "\"%s\" lacks \"%s\"", set, e.msg, cases[i].want);
	}
}

/* A cloud-only group needs no device; any other does. */
static void device_needed(void)
{
	const char *sets[] = { "/tenants/1/device=null" };
	const char *sets_ok[] = { "/tenants/1/protocol/kind=cloud_only" };
	struct cfg c;
	struct err e;
	const char *p = t_write("nodev.json",
		"{\"tenants\": [{\"protocol\": {\"kind\": \"cloud_only\"},"
		" \"workload\": {\"prompt_tokens\": 10, \"output_tokens\": 20},"
		" \"wan\": {\"rtt_s\": 0.05}}]}");

	CHECK(cfg_load(&c, p, NULL, 0, &e) == 0);
	cfg_release(&c);
	CHECK(cfg_load(&c, SMALL, sets, 1, &e) < 0);
	CHECK_MSG(strstr(e.msg, "/tenants/1/device: expected an object"), "%s",
		  e.msg);
	CHECK(cfg_load(&c, SMALL, sets_ok, 1, &e) == 0);
	cfg_release(&c);
}

/* A profile of the wrong kind is named as such, with the config pointer
 * that referred to it; cfg_parse reads a document in memory as cfg_load
 * reads a file. */
static void profiles_of_the_wrong_kind(void)
{
	struct cfg c;
	struct err e;
	const char *dev = t_write("acc.json", "{\"kind\": \"acceptance\"}");
	const char *acc = t_write("edge.json", "{\"kind\": \"edge\"}");
	char text[2048];
	json_t *doc;

	snprintf(text, sizeof(text),
		 "{\"tenants\": [{\"protocol\": {\"kind\": \"sync\"},"
		 " \"device\": {\"profile\": \"%s\"}}]}", dev);
	CHECK(cfg_load(&c, t_write("a.json", text), NULL, 0, &e) < 0);
	CHECK_MSG(strstr(e.msg, "a.json: /tenants/0/device/profile: ") &&
		  strstr(e.msg, "acc.json: an acceptance profile (\"kind\": "
			 "\"acceptance\"), where an edge profile was expected"),
		  "%s", e.msg);
	snprintf(text, sizeof(text),
		 "{\"tenants\": [{\"protocol\": {\"kind\": \"sync\"},"
		 " \"device\": {\"draft_base_s\": 0.01,"
		 " \"prefill_per_token_s\": 0.001},"
		 " \"workload\": {\"prompt_tokens\": 8, \"output_tokens\": 8},"
		 " \"wan\": {\"rtt_s\": 0.05},"
		 " \"acceptance\": {\"profile\": \"%s\"}}]}", acc);
	doc = json_loads(text, 0, NULL);
	CHECK(cfg_parse(&c, doc, "in memory", NULL, 0, NULL, &e) < 0);
	CHECK_MSG(strstr(e.msg, "in memory: /tenants/0/acceptance/profile: ") &&
		  strstr(e.msg, "edge.json: an edge profile (\"kind\": \"edge\"),"
			 " where an acceptance profile was expected"), "%s", e.msg);
}

/* device/draft_band and device/prefill_band take the draft and the
 * prefill to an end of the profile's held-out band of each kind, times
 * (1 + error), and leave the other costs; a profile without a band (a
 * measured one) is an error at that pointer. The committed phone profile,
 * its decode band set to -0.5 and 1.0, its prefill band to -0.25 and 3. */
static void bands(void)
{
	static const char *const keys[] = { "draft_band", "prefill_band" };
	static const char *const ends[] = { "none", "low", "high" };
	static const double times[2][3] = { { 1, 0.5, 2 }, { 1, 0.75, 4 } };
	json_t *prof = jx_load("results/calib/edge-snapdragon-8-gen3-llama2-"
			       "7b-w4a16.json", NULL);
	json_t *b[2] = { prof ? jx_at(prof, "/derivation/held_out/decode") : NULL,
			 prof ? jx_at(prof, "/derivation/held_out/prefill") : NULL };
	const char *phone, *xeon = "results/calib/edge-xeon-2vcpu-llama2-7b-"
				   "w4a16.json";
	double cost[2][3][5];
	struct cfg c;
	struct err e;
	char text[1024], cwd[512], *dump;

	bool ok = b[0] && b[1] && getcwd(cwd, sizeof(cwd));

	CHECK(ok);
	if (!ok) {
		json_decref(prof);
		return;
	}
	for (int k = 0; k < 2; k++) {
		json_object_set_new(b[k], "lowest", json_real(times[k][1] - 1));
		json_object_set_new(b[k], "highest", json_real(times[k][2] - 1));
	}
	dump = json_dumps(prof, JSON_COMPACT);
	phone = t_write("phone.json", dump);
	free(dump);
	/* a band that is not one is named in the profile */
	json_object_set_new(jx_at(prof, "/derivation/held_out"), "prefill",
			    json_integer(5));
	dump = json_dumps(prof, JSON_COMPACT);
	snprintf(text, sizeof(text), "{\"tenants\": [{\"protocol\": {\"kind\":"
		 " \"sync\"}, \"device\": {\"profile\": \"%s\"}}]}",
		 t_write("bad-band.json", dump));
	free(dump);
	json_decref(prof);
	CHECK(cfg_load(&c, t_write("bb.json", text), NULL, 0, &e) < 0);
	CHECK_MSG(strstr(e.msg, "bad-band.json: /derivation/held_out/prefill: "
			 "expected an object"), "%s", e.msg);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 3; i++) {
			const struct cfg_device *d;

			snprintf(text, sizeof(text),
				 "{\"tenants\": [{\"protocol\": {\"kind\": \"sync\"},"
				 " \"device\": {\"profile\": \"%s\", \"draft_pair_s\":"
				 " 0.2, \"%s\": \"%s\"}, \"workload\":"
				 " {\"prompt_tokens\": 8, \"output_tokens\": 8},"
				 " \"wan\": {\"rtt_s\": 0.05}, \"acceptance\":"
				 " {\"alpha\": 0.7}}]}", phone, keys[k], ends[i]);
			CHECK_MSG(cfg_load(&c, t_write("b.json", text), NULL, 0,
					   &e) == 0, "%s", e.msg);
			d = &c.groups[0].device;
			cost[k][i][0] = d->draft_base_s;
			cost[k][i][1] = d->draft_per_ctx_s;
			cost[k][i][2] = d->draft_pair_s;
			cost[k][i][3] = d->prefill_base_s;
			cost[k][i][4] = d->prefill_per_token_s;
			cfg_release(&c);
		}
	/* draft_band moves the three draft costs, prefill_band the two
	 * prefill costs, each by its own band */
	for (int k = 0; k < 2; k++)
		for (int i = 1; i < 3; i++)
			for (int j = 0; j < 5; j++) {
				double want = (j < 3) == (k == 0) ? times[k][i] : 1;

				CHECK_MSG(cost[k][0][j] > 0 &&
					  fabs(cost[k][i][j] / cost[k][0][j] -
					       want) < 1e-12,
					  "%s %s: cost %d %g against %g, want x%g",
					  keys[k], ends[i], j, cost[k][i][j],
					  cost[k][0][j], want);
			}
	for (int k = 0; k < 2; k++) {
		char want[128];

		snprintf(text, sizeof(text),
			 "{\"tenants\": [{\"protocol\": {\"kind\": \"sync\"},"
			 " \"device\": {\"profile\": \"%s/%s\", \"%s\":"
			 " \"high\"}}]}", cwd, xeon, keys[k]);
		snprintf(want, sizeof(want), "m.json: /tenants/0/device/%s: "
			 "expected a profile with a held-out %s band", keys[k],
			 k ? "prefill" : "decode");
		CHECK(cfg_load(&c, t_write("m.json", text), NULL, 0, &e) < 0);
		CHECK_MSG(strstr(e.msg, want) && strstr(e.msg, "found none in ") &&
			  strstr(e.msg, xeon), "%s", e.msg);
	}
}

/* The files a config names are read when it loads: a bad bit trace or a
 * bad arrival trace is an error of the config, at its pointer. */
static void files_read_at_load(void)
{
	static const char head[] =
		"{\"tenants\": [{\"protocol\": {\"kind\": \"sync\"},"
		" \"device\": {\"draft_base_s\": 0.01,"
		" \"prefill_per_token_s\": 0.001}, \"wan\": {\"rtt_s\": 0.05},";
	struct cfg c;
	struct err e;
	char text[1024];

	t_write("bad.bits", "0101x\n");
	t_write("bad.csv", "arrival_s,prompt_tokens,output_tokens\n0,8,oops\n");
	snprintf(text, sizeof(text), "%s \"workload\": {\"prompt_tokens\": 8,"
		 " \"output_tokens\": 8}, \"acceptance\": {\"model\": "
		 "\"trace\", \"file\": \"bad.bits\"}}]}", head);
	CHECK(cfg_load(&c, t_write("a.json", text), NULL, 0, &e) < 0);
	CHECK_MSG(strstr(e.msg, "a.json: /tenants/0/acceptance/file: ") &&
		  strstr(e.msg, "bad.bits:1:"), "%s", e.msg);
	snprintf(text, sizeof(text), "%s \"workload\": {\"arrival\": "
		 "\"trace\", \"trace\": \"bad.csv\"},"
		 " \"acceptance\": {\"alpha\": 0.7}}]}", head);
	CHECK(cfg_load(&c, t_write("w.json", text), NULL, 0, &e) < 0);
	CHECK_MSG(strstr(e.msg, "w.json: /tenants/0/workload/trace: ") &&
		  strstr(e.msg, "bad.csv"), "%s", e.msg);
	/* a time past a config's bound, where the trace names it */
	t_write("late.csv", "arrival_s,prompt_tokens,output_tokens\n0,8,8\n"
		"1e12,8,8\n");
	snprintf(text, sizeof(text), "%s \"workload\": {\"arrival\": "
		 "\"trace\", \"trace\": \"late.csv\"},"
		 " \"acceptance\": {\"alpha\": 0.7}}]}", head);
	CHECK(cfg_load(&c, t_write("l.json", text), NULL, 0, &e) < 0);
	CHECK_MSG(strstr(e.msg, "l.json: /tenants/0/workload/trace: ") &&
		  strstr(e.msg, "late.csv: request 2 arrives at 1e+12 s into "
			 "the run"), "%s", e.msg);
}

/* A window a protocol does not keep is a warning naming it where it was
 * given (the config's protocol, once, or a group's own): async with one
 * block in flight is sync; sync keeps one. So is a gamma other than the
 * default under a protocol that drafts nothing; the default (what a
 * resolved config carries) is not. The committed paper configs ask for
 * nothing of the kind, and a sync config switched to async gets async's
 * window. */
static void protocol_warnings(void)
{
	static const struct {
		const char *kind, *set, *want;
	} cases[] = {
		{ "/protocol/kind=async", "/protocol/window=1",
		  "/protocol/window: 1 makes async sync" },
		{ "/protocol/kind=sync", "/protocol/window=8",
		  "/protocol/window: 8 is not used: sync keeps one" },
		{ "/tenants/0/protocol={\"kind\": \"async\"}",
		  "/tenants/0/protocol/window=1",
		  "/tenants/0/protocol/window: 1 makes async sync" },
		{ "/protocol/kind=cloud_only", "/protocol/window=4",
		  "/protocol/window: 4 is not used: cloud_only sends no draft "
		  "blocks" },
		{ "/protocol/kind=edge_only", "/protocol/gamma=8",
		  "/protocol/gamma: 8 is not used: edge_only drafts nothing" },
		{ "/tenants/0/protocol={\"kind\": \"cloud_only\"}",
		  "/tenants/0/protocol/gamma=2",
		  "/tenants/0/protocol/gamma: 2 is not used: cloud_only drafts "
		  "nothing" },
		{ "/protocol/kind=cloud_only", "/protocol/gamma=4", NULL },
		{ "/protocol/kind=cloud_spec", "/protocol/gamma=8", NULL },
	};
	const char *kinds[] = { "sync", "async", "cloud_only", "cloud_spec",
				"edge_only", "multi_tenant" };
	struct cfg c;
	struct err e;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *sets[] = { cases[i].kind, cases[i].set };

		if (cfg_load(&c, SMALL, sets, 2, &e) < 0) {
			CHECK_MSG(0, "%s", e.msg);
			continue;
		}
		/* the warning's line begins with the pointer */
		CHECK_MSG(cases[i].want ? c.warnings &&
			  !strncmp(c.warnings, cases[i].want,
				   strlen(cases[i].want))
			  : !c.warnings || !strstr(c.warnings, "gamma"),
			  "%s %s: warnings \"%s\"", cases[i].kind,
			  cases[i].set, c.warnings ? c.warnings : "");
		cfg_release(&c);
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char path[256];

		snprintf(path, sizeof(path), "configs/paper/%s.json", kinds[i]);
		if (cfg_load(&c, path, NULL, 0, &e) < 0) {
			CHECK_MSG(0, "%s", e.msg);
			continue;
		}
		CHECK_MSG(!c.warnings, "%s: %s", path, c.warnings);
		cfg_release(&c);
	}
	{
		const char *sets[] = { "/protocol/kind=async" };

		CHECK(cfg_load(&c, "configs/paper/sync.json", sets, 1, &e) == 0 &&
		      c.groups[0].proto.window == 4 && !c.warnings);
		cfg_release(&c);
	}
}

/* What a run will not use is a warning naming its pointer: a batching
 * window under a policy that waits for none, and under a trace, the
 * lengths and counts it gives itself and a text trace's keys; their
 * defaults (what a resolved config holds) are not. */
static void unused_warnings(void)
{
	static const struct {
		const char *a, *b, *want;
	} cases[] = {
		{ "/cloud/window_s=0.01", "/cloud/policy=continuous",
		  "/cloud/window_s: 0.01 is not used: the continuous policy "
		  "waits for no batch to fill" },
		{ "/cloud/window_s=0.01", "/cloud/policy=window", NULL },
		{ "/cloud/window_s=0.002", "/cloud/policy=slo", NULL },
		{ "/tenants/0/workload={\"arrival\": \"trace\", \"trace\": "
		  "\"TRACE\", \"output_tokens\": 64}", "/seed=1",
		  "/tenants/0/workload/output_tokens: not used: the trace gives "
		  "the requests, their lengths and times" },
		{ "/tenants/0/workload={\"arrival\": \"trace\", \"trace\": "
		  "\"TRACE\", \"trace_rate_per_s\": 2}", "/seed=1",
		  "/tenants/0/workload/trace_rate_per_s: not used: the csv "
		  "trace gives its own lengths and times" },
		{ "/tenants/0/workload={\"arrival\": \"trace\", \"trace\": "
		  "\"TRACE\", \"trace_rate_per_s\": 0}", "/seed=1", NULL },
	};
	const char *trace = t_write("t.csv", "arrival_s,prompt_tokens,"
				    "output_tokens\n0.5,10,10\n");
	struct cfg c;
	struct err e;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char a[1024], *at;
		const char *sets[] = { a, cases[i].b };

		snprintf(a, sizeof(a), "%s", cases[i].a);
		if ((at = strstr(a, "TRACE")))
			snprintf(at, sizeof(a) - (size_t)(at - a), "%s%s", trace,
				 strstr(cases[i].a, "TRACE") + 5);
		if (cfg_load(&c, SMALL, sets, 2, &e) < 0) {
			CHECK_MSG(0, "%s", e.msg);
			continue;
		}
		CHECK_MSG(cases[i].want ? c.warnings &&
			  strstr(c.warnings, cases[i].want) : !c.warnings,
			  "%s %s: warnings \"%s\"", cases[i].a, cases[i].b,
			  c.warnings ? c.warnings : "");
		cfg_release(&c);
	}
}

/* The roofline's fractions given where the roofline does not price the
 * cloud (a measured table or the derived operator table does) are a
 * warning; their defaults, or the roofline pricing, are not. */
static void gpu_warnings(void)
{
	static const struct {
		const char *file, *set, *pricing, *want;
	} cases[] = {
		{ SMALL, "/cloud/gpu/eta_bw=0.5", "/cloud/gpu/pricing=derived",
		  "/cloud/gpu/eta_bw: 0.5 is not used: the cloud is priced by "
		  "its derived operator table" },
		{ SMALL, "/cloud/gpu/eta_flops=0.3", "/cloud/gpu/pricing=roofline",
		  NULL },
		{ SMALL, "/cloud/gpu/eta_bw=0.8", "/cloud/gpu/pricing=derived",
		  NULL },
		{ "configs/paper/sync.json", "/cloud/gpu/eta_flops=0.3",
		  "/cloud/gpu/pricing=roofline", "/cloud/gpu/eta_flops: 0.3 is "
		  "not used: the cloud is priced by the measured table" },
	};
	struct cfg c;
	struct err e;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *sets[] = { cases[i].set, cases[i].pricing };

		if (cfg_load(&c, cases[i].file, sets, 2, &e) < 0) {
			CHECK_MSG(0, "%s", e.msg);
			continue;
		}
		CHECK_MSG(cases[i].want ? c.warnings &&
			  !strncmp(c.warnings, cases[i].want,
				   strlen(cases[i].want))
			  : !c.warnings, "case %zu: warnings \"%s\"", i,
			  c.warnings ? c.warnings : "");
		cfg_release(&c);
	}
}

/* A workload that will not run as written is a warning at its pointer: a
 * rate under the closed arrival, and a Poisson rate that falls to 0 for
 * ever before a tenant can expect its requests; one that can, or that
 * repeats, is not. */
static void workload_warnings(void)
{
	static const char fall[] = "/tenants/1/workload/rate_per_s="
		"{\"at_s\": [0, 10], \"per_s\": [1, 0]}";
	static const struct {
		const char *sets[4], *want;
	} cases[] = {
		{ { "/tenants/1/workload/rate_per_s=2" },
		  "/tenants/1/workload/rate_per_s: not used: the arrival is "
		  "closed" },
		{ { "/tenants/1/workload/arrival=poisson", fall,
		    "/tenants/1/workload/requests=50" },
		  "/tenants/1/workload/rate_per_s: the rate is 0 from 10 s on, "
		  "with no period_s to repeat the table: of a tenant's 50 "
		  "requests about 10 arrive before then (from its start, 0 s)" },
		{ { "/tenants/1/workload/arrival=poisson", fall,
		    "/tenants/1/workload/requests=5",
		    "/tenants/1/workload/start_s=8" },
		  "/tenants/1/workload/rate_per_s: the rate is 0 from 10 s on, "
		  "with no period_s to repeat the table: of a tenant's 5 "
		  "requests about 2 arrive before then (from its start, 8 s)" },
		{ { "/tenants/1/workload/arrival=poisson", fall,
		    "/tenants/1/workload/requests=5" }, NULL },
		{ { "/tenants/1/workload/arrival=poisson",
		    "/tenants/1/workload/rate_per_s={\"at_s\": [0, 10, 20], "
		    "\"per_s\": [1, 0, 0]}", "/tenants/1/workload/requests=50" },
		  "/tenants/1/workload/rate_per_s: the rate is 0 from 10 s on" },
		{ { "/tenants/1/workload/arrival=poisson", fall,
		    "/tenants/1/workload/requests=50",
		    "/tenants/1/workload/rate_per_s/period_s=20" }, NULL },
	};
	struct cfg c;
	struct err e;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = 0;

		while (n < 4 && cases[i].sets[n])
			n++;
		if (cfg_load(&c, SMALL, cases[i].sets, n, &e) < 0) {
			CHECK_MSG(0, "case %zu: %s", i, e.msg);
			continue;
		}
		if (cases[i].want)
			CHECK_MSG(c.warnings && !strncmp(c.warnings, cases[i].want,
							 strlen(cases[i].want)),
				  "case %zu: warnings \"%s\"", i,
				  c.warnings ? c.warnings : "");
		else
			CHECK_MSG(!c.warnings, "case %zu: %s", i, c.warnings);
		cfg_release(&c);
	}
}

const struct tcase cfg_tests[] = {
	{ "cfg: a window or a gamma the protocol does not use is a warning",
	  protocol_warnings },
	{ "cfg: a rate the workload will not follow is a warning",
	  workload_warnings },
	{ "cfg: the roofline's fractions unused by the pricing are a warning",
	  gpu_warnings },
	{ "cfg: what a run will not use is a warning naming it",
	  unused_warnings },
	{ "cfg: the small config loads with its values", loads_small },
	{ "cfg: the resolved config is complete and stable",
	  resolved_is_complete },
	{ "cfg: --set overrides, then defaults inherit", overrides },
	{ "cfg: every bad value names file, pointer, expected, got",
	  bad_values },
	{ "cfg: the edge device is required unless cloud-only", device_needed },
	{ "cfg: a profile of the wrong kind says so, and where it was named",
	  profiles_of_the_wrong_kind },
	{ "cfg: the traces a config names are read and checked at load",
	  files_read_at_load },
	{ "cfg: draft_band and prefill_band take the draft and the prefill "
	  "to an end of the profile's held-out bands", bands },
	{ 0 },
};
