/* test_sim.c: the simulator's protocol invariants, determinism and limits. */
#include "harness.h"

#include "formula.h"
#include "rate.h"
#include "report.h"
#include "rng.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Loads cfg text (written to the case directory) with overrides. */
static int load(struct cfg *c, const char *text, const char **sets, size_t n)
{
	struct err e;

	if (cfg_load(c, t_write("sim.json", text), sets, n, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return -1;
	}
	return 0;
}

static const char base_cfg[] =
	"{\"seed\": 3, \"protocol\": {\"kind\": \"async\", \"gamma\": 4, "
	"\"window\": 4},"
	" \"tenants\": [{\"name\": \"a\", \"count\": 2,"
	"   \"device\": {\"draft_base_s\": 0.01, \"prefill_per_token_s\": 0.001},"
	"   \"workload\": {\"requests\": 3, \"prompt_tokens\": 32,"
	"                \"output_tokens\": 200, \"think_s\": 0.5},"
	"   \"acceptance\": {\"model\": \"iid\", \"alpha\": 0.7},"
	"   \"wan\": {\"rtt_s\": 0.08, \"up_bps\": 1e12, \"down_bps\": 1e12}}],"
	" \"cloud\": {\"replicas\": 1}}";

/* Runs a loaded config; summary returned (caller decrefs) when asked. */
static int simulate(const struct cfg *c, struct sim *s, FILE *requests)
{
	struct err e;
	struct sim_opts opt = { .requests_csv = requests };

	sim_init(s, c, opt, &e);
	if (sim_run(s) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return -1;
	}
	return 0;
}

/* Checks what must hold after any finished run; returns failures. */
static int invariants(const struct sim *s, const char *what)
{
	const struct cfg *c = s->cfg;
	int bad = 0;

#define INV(cond, ...)                                                  \
	do {                                                            \
		if (!(cond)) {                                          \
			bad++;                                          \
			fprintf(stderr, "    %s: ", what);             \
			fprintf(stderr, __VA_ARGS__);                   \
			fputc('\n', stderr);                            \
		}                                                       \
	} while (0)
	INV(eq_size(&s->q) == 0, "%zu events left", eq_size(&s->q));
	uint64_t preempted = 0, preemptions = 0;

	for (uint32_t i = 0; i < s->n_replicas; i++) {
		preemptions += s->r[i].preemptions;
		INV(s->r[i].kv.peak <= s->kv_blocks &&
		    s->r[i].peak_active <= (uint64_t)c->cloud.max_num_seqs,
		    "replica %u held %lld of %lld blocks, %llu sequences", i,
		    (long long)s->r[i].kv.peak, (long long)s->kv_blocks,
		    (unsigned long long)s->r[i].peak_active);
	}
	for (uint32_t i = 0; i < s->n_tenants; i++)
		preempted += s->t[i].st.preemptions;
	INV(c->warmup_s > 0 || preempted == preemptions,
	    "%llu preemptions by request, %llu by replica",
	    (unsigned long long)preempted, (unsigned long long)preemptions);
	for (uint32_t i = 0; i < s->n_replicas; i++)
		INV(s->r[i].kv.used == 0 && s->r[i].active == 0 &&
		    s->r[i].admit.n == 0 && !s->r[i].busy,
		    "replica %u holds %lld KV blocks", i,
		    (long long)s->r[i].kv.used);
	for (uint32_t i = 0; i < s->n_tenants; i++) {
		const struct tenant *t = &s->t[i];
		const struct tenant_stat *x = &t->st;
		const struct cfg_group *g = &c->groups[t->group];
		uint64_t hdr = (uint64_t)g->wan.header_bytes + LINK_APP_HEADER_BYTES;
		bool spec = g->proto.caps.speculates;
		bool drafts = cfg_proto_drafts(&g->proto.caps);
		uint64_t up_msgs = (g->proto.caps.uses_cloud ? x->requests : 0) +
				   x->blocks_sent + x->ready_msgs + x->handed_back +
				   (spec ? x->requests : 0);

		INV(x->requests == (uint64_t)g->workload.requests,
		    "tenant %u finished %llu of %lld requests", i,
		    (unsigned long long)x->requests, g->workload.requests);
		INV(!t->busy && t->pending.n == 0, "tenant %u still busy", i);
		INV(x->prefill_s <= x->busy_s * (1 + 1e-9), "tenant %u prefilled "
		    "%g s of its %g s busy", i, x->prefill_s, x->busy_s);
		INV(x->bytes_up == t->up.bytes && x->bytes_down == t->down.bytes,
		    "tenant %u: reported bytes differ from the links'", i);
		INV(t->up.msgs == up_msgs, "tenant %u: %llu up messages, "
		    "ledger says %llu", i, (unsigned long long)t->up.msgs,
		    (unsigned long long)up_msgs);
		INV(x->bytes_up == hdr * up_msgs +
				   LINK_TOKEN_BYTES * (x->prompt_sent + x->draft_sent),
		    "tenant %u: up bytes do not add up", i);
		/* where the cloud makes the tokens, every one comes down in a
		 * token message (one each, or a cloud_spec verdict's; those
		 * of a handover start one each) */
		INV(x->bytes_down == (hdr + 2 * LINK_TOKEN_BYTES) * x->verdict_msgs +
				     hdr * x->token_msgs + LINK_TOKEN_BYTES *
				     (g->proto.caps.uses_edge ? x->token_msgs :
				      x->tokens),
		    "tenant %u: down bytes do not add up", i);
		if (drafts) {
			INV(x->drafted == x->accepted + x->wasted,
			    "tenant %u: drafted %llu != accepted %llu + wasted "
			    "%llu", i, (unsigned long long)x->drafted,
			    (unsigned long long)x->accepted,
			    (unsigned long long)x->wasted);
			INV(x->accepted <= x->tokens, "tenant %u accepted more "
			    "than it committed", i);
		}
		if (!g->proto.caps.uses_edge && !drafts)
			INV(x->token_msgs == x->tokens, "tenant %u: %llu tokens "
			    "streamed for %llu", i,
			    (unsigned long long)x->token_msgs,
			    (unsigned long long)x->tokens);
		if (g->proto.caps.cloud_drafts)
			INV(x->token_msgs == x->verdicts && x->judged >= x->accepted &&
			    x->tokens >= x->token_msgs, "tenant %u: %llu token "
			    "messages, %llu verdicts", i,
			    (unsigned long long)x->token_msgs,
			    (unsigned long long)x->verdicts);
		INV(x->itl.n + x->requests == x->tokens,
		    "tenant %u: %llu gaps for %llu tokens", i,
		    (unsigned long long)x->itl.n, (unsigned long long)x->tokens);
	}
#undef INV
	return bad;
}

/* Sums the output_tokens column of requests.csv and compares. */
static int tokens_in_csv(FILE *f, const struct sim *s)
{
	char line[1024];
	uint64_t sum = 0, tokens = 0;

	rewind(f); /* rows only: the header is the CLI's */
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		for (int col = 0; col < 8; col++)
			p = strchr(p, ',') + 1;
		sum += strtoull(p, NULL, 10);
	}
	for (uint32_t i = 0; i < s->n_tenants; i++)
		tokens += s->t[i].st.tokens;
	return sum != tokens;
}

/* Random configs over every protocol, policy and acceptance model. */
static void random_configs(void)
{
	static const char *const kinds[] = { "edge_only", "cloud_only", "sync",
					     "async", "cloud_spec" };
	static const char *const policies[] = { "dedicated", "continuous",
						"window", "slo" };
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		gsl_rng *r = rng_new(2026, rng_stream_id("test/random-configs"));
		int bad = 0;

		for (int n = 0; n < 60; n++) {
			char text[4096], groups[3000] = "", what[64];
			int ng = 1 + (int)gsl_rng_uniform_int(r, 3);
			struct cfg c;
			struct sim s;
			FILE *csv = tmpfile();

			for (int g = 0; g < ng; g++) {
				static const char *const hand[] = { "never",
					"always", "faster" };
				size_t len = strlen(groups);
				double alpha = gsl_rng_uniform(r);
				size_t kind = gsl_rng_uniform_int(r, 5);
				char ho[64] = "";

				if (kind == 2 || kind == 3)
					snprintf(ho, sizeof(ho), ", \"handover\": "
						 "\"%s\", \"handback\": \"%s\"",
						 hand[gsl_rng_uniform_int(r, 3)],
						 gsl_rng_uniform_int(r, 2) ?
						 "faster" : "never");

				snprintf(groups + len, sizeof(groups) - len,
					 "%s{\"name\": \"g%d\", \"count\": %lu,"
					 " \"protocol\": {\"kind\": \"%s\", \"gamma\": %lu,"
					 " \"window\": %lu%s},"
					 " \"device\": {\"draft_base_s\": %g,"
					 " \"draft_per_ctx_s\": 1e-6,"
					 " \"prefill_per_token_s\": 0.0005},"
					 " \"workload\": {\"arrival\": \"%s\", %s"
					 " \"requests\": %lu,"
					 " \"prompt_tokens\": {\"dist\": \"uniform\","
					 " \"min\": 1, \"max\": 300},"
					 " \"output_tokens\": {\"dist\": \"uniform\","
					 " \"min\": 1, \"max\": 300},"
					 " \"think_s\": {\"dist\": \"exponential\","
					 " \"mean\": 0.3}},"
					 " \"acceptance\": %s,"
					 " \"wan\": {\"rtt_s\": {\"dist\": \"lognormal\","
					 " \"mean\": %g, \"sd\": 0.02}, \"loss\": %g,"
					 " \"up_bps\": %g}}",
					 g ? "," : "", g, 1 + gsl_rng_uniform_int(r, 5),
					 kinds[kind],
					 1 + gsl_rng_uniform_int(r, 8),
					 1 + gsl_rng_uniform_int(r, 6), ho,
					 0.002 + 0.03 * gsl_rng_uniform(r),
					 gsl_rng_uniform(r) < 0.5 ? "closed" : "poisson",
					 "\"rate_per_s\": 2,",
					 1 + gsl_rng_uniform_int(r, 4),
					 gsl_rng_uniform(r) < 0.7
						 ? (alpha < 0.5 ? "{\"alpha\": 0.4}"
								: "{\"alpha\": 0.9}")
						 : "{\"model\": \"markov\", "
						   "\"p_after_accept\": 0.9, "
						   "\"p_after_reject\": 0.3}",
					 0.01 + 0.2 * gsl_rng_uniform(r),
					 gsl_rng_uniform(r) < 0.3 ? 0.05 : 0.0,
					 gsl_rng_uniform(r) < 0.5 ? 1e6 : 1e9);
			}
			snprintf(text, sizeof(text),
				 "{\"seed\": %d, \"tenants\": [%s], \"cloud\": "
				 "{\"replicas\": %lu, \"policy\": \"%s\", "
				 "\"router\": \"%s\", \"max_batch_tokens\": %lu, "
				 "\"prefill_chunk_tokens\": %lu, "
				 "\"kv_capacity_tokens\": %lu, "
				 "\"kv_policy\": \"%s\", \"max_num_seqs\": %lu}}",
				 n, groups, 1 + gsl_rng_uniform_int(r, 3),
				 policies[gsl_rng_uniform_int(r, 4)],
				 gsl_rng_uniform(r) < 0.5 ? "round_robin"
							  : "least_loaded",
				 4 + gsl_rng_uniform_int(r, 600),
				 1 + gsl_rng_uniform_int(r, 256),
				 600 + gsl_rng_uniform_int(r, 2000),
				 gsl_rng_uniform(r) < 0.7 ? "paged" : "reserve",
				 1 + gsl_rng_uniform_int(r, 12));
			snprintf(what, sizeof(what), "random config %d", n);
			if (load(&c, text, NULL, 0) < 0) {
				bad++;
				continue;
			}
			if (simulate(&c, &s, csv) == 0) {
				bad += invariants(&s, what);
				if (tokens_in_csv(csv, &s)) {
					fprintf(stderr, "    %s: requests.csv "
						"disagrees\n", what);
					bad++;
				}
			} else {
				bad++;
			}
			sim_release(&s);
			cfg_release(&c);
			fclose(csv);
		}
		rng_free(r);
		_exit(bad || t_failures ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "the random configs broke an invariant (or a run aborted)");
}

/* async with W = 1 is sync, event for event. */
static void async_w1_is_sync(void)
{
	const char *sync_set[] = { "/protocol/kind=sync" };
	const char *async_set[] = { "/protocol/window=1" };
	struct cfg a, b;
	struct sim sa, sb;
	json_t *ja, *jb;

	if (load(&a, base_cfg, sync_set, 1) < 0 ||
	    load(&b, base_cfg, async_set, 1) < 0)
		return;
	CHECK(simulate(&a, &sa, NULL) == 0 && simulate(&b, &sb, NULL) == 0);
	ja = rep_summary(&sa);
	jb = rep_summary(&sb);
	json_object_set_new(json_array_get(json_object_get(ja, "groups"), 0),
			    "protocol", json_string("x"));
	json_object_set_new(json_array_get(json_object_get(jb, "groups"), 0),
			    "protocol", json_string("x"));
	CHECK(json_equal(ja, jb));
	CHECK(sa.events == sb.events);
	json_decref(ja);
	json_decref(jb);
	sim_release(&sa);
	sim_release(&sb);
	cfg_release(&a);
	cfg_release(&b);
}

/* With every draft accepted and a fast cloud, async commits at the edge's
 * drafting rate once the pipeline is full; sync does not. */
static void async_full_pipeline(void)
{
	const char *sets[] = { "/tenants/0/acceptance/alpha=1",
			       "/tenants/0/count=1",
			       "/tenants/0/workload/output_tokens=2000",
			       "/tenants/0/workload/requests=1",
			       "/protocol/window=8" };
	const char *sync_sets[] = { "/tenants/0/acceptance/alpha=1",
				    "/tenants/0/count=1",
				    "/tenants/0/workload/output_tokens=2000",
				    "/tenants/0/workload/requests=1",
				    "/protocol/kind=sync" };
	struct cfg c;
	struct sim s;
	double tpot;

	if (load(&c, base_cfg, sets, 5) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	tpot = s.t[0].st.tpot_sum;
	/* 10 ms a draft token; the first RTT + verify is amortised */
	CHECK_MSG(fabs(tpot - 0.010) < 0.0005, "async TPOT %.6f s", tpot);
	CHECK(s.t[0].st.wasted == 0 && s.stale_dropped == 0);
	sim_release(&s);
	cfg_release(&c);
	if (load(&c, base_cfg, sync_sets, 5) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	/* sync pays a round trip every gamma + 1 tokens */
	CHECK_MSG(s.t[0].st.tpot_sum > (4 * 0.010 + 0.08) / 5,
		  "sync TPOT %.6f s", s.t[0].st.tpot_sum);
	sim_release(&s);
	cfg_release(&c);
}

/* Equal seeds, equal results; another group leaves a group's draws alone. */
static void determinism(void)
{
	const char *two[] = { "/tenants/1={\"name\": \"b\", \"count\": 3,"
			      " \"device\": {\"draft_base_s\": 0.02,"
			      " \"prefill_per_token_s\": 0.001},"
			      " \"workload\": {\"requests\": 2, \"prompt_tokens\": 50,"
			      " \"output_tokens\": 40},"
			      " \"acceptance\": {\"alpha\": 0.5},"
			      " \"wan\": {\"rtt_s\": 0.05}}",
			      "/tenants/0/workload/output_tokens={\"dist\": "
			      "\"exponential\", \"mean\": 100}" };
	struct cfg c1, c2, c3;
	struct sim s1, s2, s3;
	FILE *f1 = tmpfile(), *f2 = tmpfile(), *f3 = tmpfile();
	char a[512], b[512];
	int lines = 0, same_lengths = 0;

	if (load(&c1, base_cfg, two + 1, 1) < 0 || load(&c2, base_cfg, two + 1, 1) < 0 ||
	    load(&c3, base_cfg, two, 2) < 0)
		return;
	CHECK(simulate(&c1, &s1, f1) == 0 && simulate(&c2, &s2, f2) == 0 &&
	      simulate(&c3, &s3, f3) == 0);
	rewind(f1);
	rewind(f2);
	while (fgets(a, sizeof(a), f1)) {
		CHECK(fgets(b, sizeof(b), f2) && !strcmp(a, b));
		lines++;
	}
	CHECK(lines == 6);
	/* group a's request lengths are the same with group b beside it */
	rewind(f1);
	rewind(f3);
	while (fgets(a, sizeof(a), f1)) {
		char want[64];

		if (strncmp(a, "a,", 2))
			continue;
		/* group,tenant,request ... prompt,output: compare by key */
		rewind(f3);
		while (fgets(b, sizeof(b), f3)) {
			char *pa = a, *pb = b;
			int ok = 1;

			for (int col = 0; col < 9; col++) {
				size_t la = strcspn(pa, ","), lb = strcspn(pb, ",");

				if ((col < 3 || col >= 7) &&
				    (la != lb || strncmp(pa, pb, la)))
					ok = 0;
				pa += la + 1;
				pb += lb + 1;
			}
			if (ok) {
				same_lengths++;
				break;
			}
		}
		snprintf(want, sizeof(want), "%.20s", a);
	}
	CHECK_MSG(same_lengths == 6, "%d of 6 requests kept their lengths",
		  same_lengths);
	sim_release(&s1);
	sim_release(&s2);
	sim_release(&s3);
	cfg_release(&c1);
	cfg_release(&c2);
	cfg_release(&c3);
	fclose(f1);
	fclose(f2);
	fclose(f3);
}

/* Whole reservations: requests that do not fit the KV cache wait for
 * admission, and all end. */
static void admission_queue(void)
{
	const char *sets[] = { "/cloud/kv_capacity_tokens=300",
			       "/tenants/0/count=5", "/cloud/kv_policy=reserve" };
	struct cfg c;
	struct sim s;

	if (load(&c, base_cfg, sets, 3) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	CHECK(invariants(&s, "admission") == 0);
	CHECK(s.r[0].peak_active == 1); /* 232 tokens each: one at a time */
	CHECK(s.r[0].preemptions == 0);
	sim_release(&s);
	cfg_release(&c);
}

/* Paged: the same requests share the 18 blocks, a sequence that cannot
 * get its next block preempts the latest-arrived, and every request still
 * ends with all its tokens; a larger pool needs no preemption, and
 * max_num_seqs caps the requests held at once. */
static void paged_preempts(void)
{
	const char *small[] = { "/cloud/kv_capacity_tokens=300",
				"/tenants/0/count=5" };
	const char *large[] = { "/cloud/kv_capacity_tokens=30000",
				"/tenants/0/count=5", "/cloud/max_num_seqs=3" };
	struct cfg c;
	struct sim s;

	if (load(&c, base_cfg, small, 2) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	CHECK(invariants(&s, "paged") == 0);
	CHECK_MSG(s.r[0].peak_active >= 3, "%llu",
		  (unsigned long long)s.r[0].peak_active);
	CHECK_MSG(s.r[0].preemptions > 0, "no preemption");
	CHECK(s.r[0].kv.peak <= 18);
	for (uint32_t i = 0; i < s.n_tenants; i++)
		CHECK(s.t[i].st.tokens == 3 * 200);
	sim_release(&s);
	cfg_release(&c);
	if (load(&c, base_cfg, large, 3) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	CHECK(invariants(&s, "paged, large") == 0);
	CHECK(s.r[0].peak_active == 3 && s.r[0].preemptions == 0);
	sim_release(&s);
	cfg_release(&c);
}

/* cloud_spec in lockstep: a round is one iteration (its draft steps
 * inside it), so a lone request's iterations are its prefill and its
 * rounds; requests that start together share their rounds' iterations. */
static void cloud_spec_lockstep(void)
{
	const char *alone[] = { "/protocol/kind=cloud_spec",
				"/tenants/0/count=1",
				"/tenants/0/workload/requests=1" };
	const char *two[] = { "/protocol/kind=cloud_spec",
			      "/tenants/0/count=4",
			      "/tenants/0/workload/requests=1",
			      "/tenants/0/workload/think_s=0" };
	struct cfg c;
	struct sim s;

	if (load(&c, base_cfg, alone, 3) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	CHECK(invariants(&s, "cloud_spec alone") == 0);
	/* the prefill's first token comes in a token message of its own */
	CHECK_MSG(s.r[0].batches == s.t[0].st.verdicts, "%llu batches, "
		  "%llu verdicts", (unsigned long long)s.r[0].batches,
		  (unsigned long long)s.t[0].st.verdicts);
	sim_release(&s);
	cfg_release(&c);
	if (load(&c, base_cfg, two, 4) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	CHECK(invariants(&s, "cloud_spec, four") == 0);
	/* the four start together: their rounds ride the same iterations */
	CHECK_MSG(s.r[0].batches < s.t[0].st.verdicts + s.t[1].st.verdicts,
		  "%llu batches", (unsigned long long)s.r[0].batches);
	sim_release(&s);
	cfg_release(&c);
}

/* The busy shares count the time inside the measured window: a GPU's
 * iterations that run past the run's end, or started in the warm-up, and
 * the edge's work for requests that began in it, only in part (they had
 * read 110% busy and 2 devices' worth of computing for one). */
static void busy_shares_in_window(void)
{
	const char *cases[][4] = {
		{ "/protocol/kind=cloud_spec", "/protocol/window=1",
		  "/horizon_s=0.5", "/warmup_s=0.4" },
		{ "/protocol/kind=cloud_only", "/tenants/0/count=8",
		  "/horizon_s=0.7", "/warmup_s=0.65" },
		{ "/tenants/0/count=1", "/tenants/0/workload/think_s=0",
		  "/warmup_s=3.5", "/tenants/0/workload/requests=3" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfg c;
		struct sim s;
		json_t *sum;
		double gpu, edge;

		if (load(&c, base_cfg, cases[i], 4) < 0)
			return;
		CHECK(simulate(&c, &s, NULL) == 0);
		sum = rep_summary(&s);
		gpu = json_number_value(jx_at(sum, "/cloud/busy_fraction"));
		edge = json_number_value(jx_at(sum, "/all/edge_busy_fraction"));
		CHECK_MSG(gpu > 0 && gpu <= 1 + 1e-12, "case %zu: GPU busy %.6f",
			  i, gpu);
		CHECK_MSG(edge <= 1 + 1e-12, "case %zu: edge busy %.6f", i,
			  edge);
		CHECK_MSG(json_number_value(jx_at(sum, "/cloud/mbu")) <= 1,
			  "case %zu: MBU %g", i,
			  json_number_value(jx_at(sum, "/cloud/mbu")));
		json_decref(sum);
		sim_release(&s);
		cfg_release(&c);
	}
}

/* A request of one output token has no time per token after the first:
 * it meets any TPOT bound, the TPOT figures leave it out (null where no
 * request has one), and requests.csv says nan, not 0. */
static void one_token_tpot(void)
{
	const char *sets[] = { "/tenants/0/workload/output_tokens=1",
			       "/slo/tpot_s=0.000001" };
	struct cfg c;
	struct sim s;
	json_t *sum;
	char row[512] = "";
	FILE *f = tmpfile();

	if (load(&c, base_cfg, sets, 2) < 0)
		return;
	CHECK(simulate(&c, &s, f) == 0);
	sum = rep_summary(&s);
	CHECK_MSG(json_is_null(jx_at(sum, "/all/tpot_s")) &&
		  json_number_value(jx_at(sum, "/all/tpot_attainment")) == 1,
		  "tpot %g, attainment %g",
		  json_number_value(jx_at(sum, "/all/tpot_s")),
		  json_number_value(jx_at(sum, "/all/tpot_attainment")));
	rewind(f);
	CHECK(fgets(row, sizeof(row), f) && strstr(row, ",1,nan,nan,nan,"));
	json_decref(sum);
	sim_release(&s);
	cfg_release(&c);
	fclose(f);
}

/* The steady window: with many requests a tenant it spans most of the
 * run and its cost a token is below the whole run's (the drain's idle GPU
 * left out); with one request a tenant there is none to speak of. */
static void steady_window(void)
{
	const char *many[] = { "/protocol/kind=cloud_only",
			       "/tenants/0/count=8",
			       "/tenants/0/workload/requests=40",
			       "/tenants/0/workload/think_s={\"dist\": "
			       "\"exponential\", \"mean\": 2}" };
	const char *one[] = { "/protocol/kind=cloud_only",
			      "/tenants/0/workload/requests=1" };
	struct cfg c;
	struct sim s;
	json_t *sum;

	if (load(&c, base_cfg, many, 4) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	sum = rep_summary(&s);
	CHECK_MSG(json_is_true(jx_at(sum, "/steady/steady")) &&
		  json_number_value(jx_at(sum, "/steady/share_of_run")) > 0.6,
		  "%g", json_number_value(jx_at(sum, "/steady/share_of_run")));
	CHECK_MSG(json_number_value(jx_at(sum, "/steady/usd_per_mtok")) <
		  json_number_value(jx_at(sum, "/all/usd_per_mtok")), "%g, %g",
		  json_number_value(jx_at(sum, "/steady/usd_per_mtok")),
		  json_number_value(jx_at(sum, "/all/usd_per_mtok")));
	/* a million tokens' GPU-hours at the GPU's price are their dollars */
	CHECK_NEAR(json_number_value(jx_at(sum, "/steady/gpu_hours_per_mtok")) *
		   c.cloud.gpu.spec.usd_per_hour,
		   json_number_value(jx_at(sum, "/steady/usd_per_mtok")), 1e-9);
	CHECK(json_number_value(jx_at(sum, "/steady/cloud_j_per_token")) > 0);
	/* the drain, with fewer tenants left, makes fewer tokens a second */
	CHECK_MSG(json_number_value(jx_at(sum, "/steady/tokens_per_s")) >
		  json_number_value(jx_at(sum, "/all/tokens_per_s")), "%g, %g",
		  json_number_value(jx_at(sum, "/steady/tokens_per_s")),
		  json_number_value(jx_at(sum, "/all/tokens_per_s")));
	json_decref(sum);
	sim_release(&s);
	cfg_release(&c);
	if (load(&c, base_cfg, one, 2) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	sum = rep_summary(&s);
	CHECK(json_is_false(jx_at(sum, "/steady/steady")));
	json_decref(sum);
	sim_release(&s);
	cfg_release(&c);
	/* the same load stretched to weeks of simulated time: the bins
	 * widen (bounded memory), lose no token, and the window is whole
	 * bins, still steady */
	many[3] = "/tenants/0/workload/think_s={\"dist\": \"exponential\", "
		  "\"mean\": 200000}";
	if (load(&c, base_cfg, many, 4) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	sum = rep_summary(&s);
	{
		double tok = 0, bin = s.bin_s;

		for (size_t k = 0; k < s.n_bins; k++)
			tok += s.bin_tokens[k];
		CHECK_MSG(bin > 1 && s.n_bins <= SIM_BINS_MAX &&
			  s.end_s / bin < (double)SIM_BINS_MAX, "bins of %g s, "
			  "%zu of them, a run of %g s", bin, s.n_bins, s.end_s);
		CHECK_NEAR(tok, json_number_value(jx_at(sum, "/all/tokens")), 0);
		CHECK(fmod(json_number_value(jx_at(sum, "/steady/from_s")), bin) == 0 &&
		      fmod(json_number_value(jx_at(sum, "/steady/to_s")), bin) == 0);
		CHECK(json_is_true(jx_at(sum, "/steady/steady")));
	}
	json_decref(sum);
	sim_release(&s);
	cfg_release(&c);
}

/* Arrival times of the finished requests in a run's requests.csv (its
 * 4th column), into t (at most cap); their count. */
static size_t arrivals(FILE *f, double *t, size_t cap)
{
	char line[1024];
	size_t n = 0;

	rewind(f);
	if (!fgets(line, sizeof(line), f))
		return 0;
	while (n < cap && fgets(line, sizeof(line), f)) {
		const char *p = line;

		for (int k = 0; k < 3 && p; k++)
			if ((p = strchr(p, ',')))
				p++;
		if (p)
			t[n++] = strtod(p, NULL);
	}
	return n;
}

/* A rate table: Poisson arrivals only where its rate is above 0, about
 * rate x time of them, repeating with its period; rate_scale scales it;
 * a bad table names its pointer. */
static void rate_table(void)
{
	static double t[4096];
	const char *base[] = { "/protocol/kind=cloud_only", "/horizon_s=400",
			       "/tenants/0/count=4",
			       "/tenants/0/workload/arrival=\"poisson\"",
			       "/tenants/0/workload/requests=100000",
			       "/tenants/0/workload/think_s=0",
			       "/tenants/0/workload/output_tokens=4",
			       "/tenants/0/workload/rate_per_s={\"at_s\": [0, 50],"
			       " \"per_s\": [0.5, 0], \"period_s\": 100}", NULL };
	const char *sets[9];
	struct cfg c;
	struct sim s;
	struct err e;
	size_t n[2] = { 0 }, bad = 0;

	for (int k = 0; k < 2; k++) {
		FILE *f = tmpfile();

		for (int i = 0; i < 8; i++)
			sets[i] = base[i];
		sets[8] = "/tenants/0/workload/rate_scale=2";
		if (load(&c, base_cfg, sets, k ? 9 : 8) < 0)
			return;
		CHECK(simulate(&c, &s, f) == 0);
		n[k] = arrivals(f, t, sizeof(t) / sizeof(t[0]));
		for (size_t i = 0; i < n[k]; i++)
			bad += fmod(t[i], 100) >= 50;
		sim_release(&s);
		cfg_release(&c);
		fclose(f);
	}
	/* 4 tenants x 0.5 a second x 50 s of each 100 x 4 periods: 400 */
	CHECK_MSG(n[0] > 300 && n[0] < 500, "%zu arrivals", n[0]);
	CHECK_MSG(n[1] > 650 && n[1] < 950, "%zu arrivals at twice", n[1]);
	CHECK_MSG(bad == 0, "%zu arrivals where the rate is 0", bad);
	sets[7] = "/tenants/0/workload/rate_per_s={\"at_s\": [5], "
		  "\"per_s\": [1]}";
	CHECK(cfg_load(&c, t_write("sim.json", base_cfg), sets, 8, &e) < 0 &&
	      strstr(e.msg, "/tenants/0/workload/rate_per_s: expected at_s "
		     "starting at 0"));
	sets[7] = "/tenants/0/workload/rate_per_s={\"at_s\": [0, 10], "
		  "\"per_s\": [1, 0], \"period_s\": 10}";
	CHECK(cfg_load(&c, t_write("sim.json", base_cfg), sets, 8, &e) < 0 &&
	      strstr(e.msg, "expected a period_s at least 0.001 s past the last "
		     "at_s"));
	sets[7] = "/tenants/0/workload/rate_per_s={\"at_s\": [0, 1e-9], "
		  "\"per_s\": [0, 1], \"period_s\": 2e-9}";
	CHECK(cfg_load(&c, t_write("sim.json", base_cfg), sets, 8, &e) < 0 &&
	      strstr(e.msg, "/rate_per_s/at_s/1: expected a time at least "
		     "0.001 s past the one before (0 s), got 1e-9"));
}

/* Arrivals rarer than one a period (a rate of 0.4 a quarter of each
 * second, at scales 1 and 2): past a whole period without one, the
 * periods are skipped at once, the process the same: rate x time of them,
 * none where the rate is 0, uniform where it is not. One step a period
 * had taken hours where the rate is rarer still. */
static void rate_rare(void)
{
	double at[] = { 0, 0.25 }, per[] = { 0.4, 0 };
	struct rate_table r = { .n = 2, .at_s = at, .per_s = per,
				.period_s = 1, .scale = 1 };

	for (int k = 1; k <= 2; k++) {
		gsl_rng *g = rng_new(7, (uint64_t)k);
		double t = 0, phase = 0;
		size_t bad = 0;
		const int n = 20000;

		r.scale = k;
		for (int i = 0; i < n; i++) {
			t = rate_next_s(&r, t, g);
			bad += fmod(t, 1) >= 0.25;
			phase += fmod(t, 1);
		}
		/* 0.1 k a second: n arrivals in 2e5 / k s, sd 1414 / k */
		CHECK_MSG(fabs(t - 2e5 / k) < 6000.0 / k, "scale %d: %d arrivals "
			  "in %.0f s", k, n, t);
		CHECK_MSG(bad == 0, "scale %d: %zu where the rate is 0", k, bad);
		/* uniform in [0, 0.25): mean 0.125, sd of the mean 5.1e-4 */
		CHECK_MSG(fabs(phase / n - 0.125) < 0.0025, "scale %d: mean "
			  "phase %.4f", k, phase / n);
		rng_free(g);
	}
}

/* A request drawn longer than the KV cache (lengths with no bound, so the
 * config's check takes their mean) stops the run with a message. */
static void kv_below_one_request(void)
{
	const char *sets[] = { "/cloud/kv_capacity_tokens=300",
			       "/tenants/0/workload/requests=20",
			       "/tenants/0/workload/output_tokens={\"dist\": "
			       "\"exponential\", \"mean\": 200}" };
	struct cfg c;
	struct sim s;
	struct err e;

	if (load(&c, base_cfg, sets, 3) < 0)
		return;
	sim_init(&s, &c, (struct sim_opts){ 0 }, &e);
	CHECK(sim_run(&s) < 0);
	CHECK_MSG(strstr(e.msg, "/cloud/kv_capacity_tokens: 300 tokens (18 "
			 "blocks of 16, less the watermark) are fewer than "
			 "one request needs (prompt 32 + output"),
		  "%s", e.msg);
	sim_release(&s);
	cfg_release(&c);
}

/* ---- each scheduling policy's decision on a queue set by hand ---- */

/* Three sync tenants with one queued block of 4 drafts each (5 tokens to
 * verify), all on replica 0, ready in tenant order, none prefilling; the
 * budget 12 fits two of them. Tenant t arrived at arrive_s[t]. */
static int queued(struct cfg *c, struct sim *s, const char *policy,
		  const double arrive_s[3])
{
	char set_policy[64];
	const char *sets[] = { "/protocol/kind=sync", "/tenants/0/count=3",
			       "/cloud/max_batch_tokens=12", set_policy,
			       "/cloud/window_s=1" };

	snprintf(set_policy, sizeof(set_policy), "/cloud/policy=\"%s\"",
		 policy);
	if (load(c, base_cfg, sets, 5) < 0)
		return -1;
	sim_init(s, c, (struct sim_opts){ 0 }, NULL);
	for (uint32_t t = 0; t < 3; t++) {
		struct tenant *x = &s->t[t];

		x->cloud.admitted = x->cloud.in_ready = true;
		x->cloud.prompt = 32;
		x->cloud.out = 200;
		x->cloud.queued_s = x->rq.arrive_s = arrive_s[t];
		blk_ring_push(&x->cloud.cq, (struct blk){ .g = 4 });
		fifo_push(&s->r[x->cloud.replica].ready, t);
	}
	return 0;
}

/* The batch's tenants in order, as a string of digits. */
static void batch_tenants(const struct replica *r, char *out)
{
	for (uint32_t i = 0; i < r->nbatch; i++)
		out[i] = (char)('0' + r->batch[i].tenant);
	out[r->nbatch] = '\0';
}

/* The order a policy takes the three blocks in: continuous first come,
 * first served (tenants 0 and 1 fill 10 of the 12 tokens, tenant 2 waits at
 * the head of the queue); slo least slack first (the earliest arrival has
 * the earliest TTFT deadline). */
static void policy_order(void)
{
	static const struct {
		const char *policy;
		double arrive_s[3];
		const char *batch;
		uint32_t left; /* the tenant left in the ready queue */
	} cases[] = {
		{ "continuous", { 0, 0, 0 }, "01", 2 },
		{ "slo", { 0.2, 0.3, 0.1 }, "20", 1 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct cfg c;
		struct sim s;
		char got[8];

		if (queued(&c, &s, cases[k].policy, cases[k].arrive_s) < 0)
			return;
		CHECK(!sim_sched_hold(&s, 0));
		sim_sched_form(&s, 0);
		batch_tenants(&s.r[0], got);
		CHECK_MSG(!strcmp(got, cases[k].batch), "%s: batch %s",
			  cases[k].policy, got);
		CHECK(s.r[0].batch[0].kind == ITEM_VERIFY &&
		      s.r[0].batch[0].tokens == 5);
		CHECK(s.r[0].ready.n == 1 &&
		      *fifo_at(&s.r[0].ready, 0) == cases[k].left);
		sim_release(&s);
		cfg_release(&c);
	}
}

/* window: the 15 queued tokens fill the budget of 12, so it starts at
 * once; with tenant 0's 5 alone it holds and arms the window's event, and
 * the batch, once formed, is that block */
static void policy_window(void)
{
	static const double at[3] = { 0, 0, 0 };
	struct cfg c;
	struct sim s;
	char got[8];

	if (queued(&c, &s, "window", at) < 0)
		return;
	CHECK(!sim_sched_hold(&s, 0));
	s.r[0].ready.n = 1; /* only tenant 0 queued */
	CHECK(sim_sched_hold(&s, 0) && s.r[0].window_ev != EQ_NONE);
	sim_sched_form(&s, 0);
	batch_tenants(&s.r[0], got);
	CHECK_MSG(!strcmp(got, "0"), "batch %s", got);
	sim_release(&s);
	cfg_release(&c);
}

/* dedicated: a replica a tenant, each batch one tenant's block */
static void policy_dedicated(void)
{
	static const double at[3] = { 0, 0, 0 };
	struct cfg c;
	struct sim s;
	char got[8];

	if (queued(&c, &s, "dedicated", at) < 0)
		return;
	CHECK(s.n_replicas == 3);
	/* queued() put every tenant on replica 0: give each its own */
	s.r[0].ready.n = 0;
	for (uint32_t t = 0; t < 3; t++) {
		s.t[t].cloud.replica = t;
		fifo_push(&s.r[t].ready, t);
	}
	for (uint32_t r = 0; r < 3; r++) {
		CHECK(!sim_sched_hold(&s, r));
		sim_sched_form(&s, r);
		batch_tenants(&s.r[r], got);
		CHECK_MSG(got[0] == (char)('0' + r) && !got[1], "replica %u: %s",
			  r, got);
	}
	sim_release(&s);
	cfg_release(&c);
}

/* Adaptive gamma at a constant alpha and RTT settles on the gamma the
 * model (sync's closed form, async's renewal model) finds best for the true
 * alpha and the verdict latency the tenant measured. The cloud is the
 * roofline, whose verification time barely moves with gamma: the model
 * takes the latency as one figure. */
static void adaptive_converges(void)
{
	static const char text[] =
		"{\"seed\": 2, \"protocol\": {\"kind\": \"sync\", \"gamma\": "
		"\"adaptive\", \"window\": 32},"
		" \"tenants\": [{\"name\": \"a\", \"count\": 1,"
		"   \"device\": {\"draft_base_s\": 0.02, \"prefill_per_token_s\": 0.001},"
		"   \"workload\": {\"requests\": 1, \"prompt_tokens\": 32,"
		"                \"output_tokens\": 6000},"
		"   \"acceptance\": {\"model\": \"iid\", \"alpha\": 0.8},"
		"   \"wan\": {\"rtt_s\": 0.1}}],"
		" \"cloud\": {\"replicas\": 1, \"context_tokens\": 8192,"
		"   \"gpu\": {\"pricing\": \"roofline\"}}}";
	const char *kinds[] = { "/protocol/kind=sync", "/protocol/kind=async" };

	for (int k = 0; k < 2; k++) {
		struct cfg c;
		struct sim s;
		const struct tenant *t;
		double best = INFINITY, mean;
		int opt = 0;

		if (load(&c, text, &kinds[k], 1) < 0 || simulate(&c, &s, NULL) < 0)
			return;
		t = &s.t[0];
		for (int g = 1; g <= 16; g++) {
			double d = 0.02, lat = t->edge.est.latency_s, cost;
			int w = 1 + (int)ceil(lat / (g * d));

			w = w < 2 ? 2 : w > 32 ? 32 : w;
			cost = k == 0 ? (g * d + lat) / fm_expected_accepted(0.8, g)
				      : fm_async_renewal_s_per_token(0.8, g, w, d, lat);
			if (cost < best) {
				best = cost;
				opt = g;
			}
		}
		mean = (double)t->st.draft_sent / (double)t->st.blocks_sent;
		CHECK_MSG(fabs(mean - opt) <= 0.5 && abs(t->edge.gamma - opt) <= 1,
			  "%s: blocks of %.2f drafts on average, the last of %d; "
			  "the model's best for alpha 0.8 and %.1f ms is %d",
			  kinds[k], mean, t->edge.gamma, 1e3 * t->edge.est.latency_s,
			  opt);
		CHECK(t->edge.est.latency_s > 0.1 && t->edge.est.latency_s < 0.2);
		sim_release(&s);
		cfg_release(&c);
	}
}

/* The end of base_cfg's run under each of three pairs of overrides, its
 * invariants checked; -1 when one did not load or run. */
static int three_ends(const char *sets[3][2], double end[3])
{
	struct sim s;

	for (int k = 0; k < 3; k++) {
		struct cfg c;

		if (load(&c, base_cfg, sets[k], 2) < 0 || simulate(&c, &s, NULL) < 0)
			return -1;
		end[k] = s.end_s;
		CHECK(invariants(&s, sets[k][0]) == 0);
		sim_release(&s);
		cfg_release(&c);
	}
	return 0;
}

/* An RTT that steps: messages sent from at_s on draw the new round trip
 * (a step before any message is the new RTT all along); one after the end
 * changes nothing. */
static void rtt_step(void)
{
	const char *sets[3][2] = {
		{ "/tenants/0/wan/rtt_s=0.3", "/tenants/0/workload/start_s=0.5" },
		{ "/tenants/0/wan/rtt_step={\"at_s\": 0.1, \"rtt_s\": 0.3}",
		  "/tenants/0/workload/start_s=0.5" },
		{ "/tenants/0/wan/rtt_step={\"at_s\": 1e6, \"rtt_s\": 0.3}",
		  "/tenants/0/workload/start_s=0.5" },
	};
	double end[3] = { 0 };

	if (three_ends(sets, end) < 0)
		return;
	CHECK_MSG(end[0] == end[1] && end[2] < end[0], "ends %.9g %.9g %.9g",
		  end[0], end[1], end[2]);
}

/* A WAN blackout of 3 s mid-run holds every message sent during it: the
 * run ends at least 2.5 s later (the tenant waits out all but its last
 * half second of drafting); one after the end changes nothing. */
static void blackout(void)
{
	const char *sets[3][2] = {
		{ "/tenants/0/workload/start_s=0.5", "/tenants/0/wan/rtt_s=0.08" },
		{ "/tenants/0/wan/blackout={\"at_s\": 0.6, \"for_s\": 3}",
		  "/tenants/0/workload/start_s=0.5" },
		{ "/tenants/0/wan/blackout={\"at_s\": 1e6, \"for_s\": 3}",
		  "/tenants/0/workload/start_s=0.5" },
	};
	double end[3] = { 0 };

	if (three_ends(sets, end) < 0)
		return;
	CHECK_MSG(end[1] > end[0] + 2.5 && end[2] == end[0],
		  "ends %.9g %.9g %.9g", end[0], end[1], end[2]);
}

/* Runs one tenant of base_cfg with the overrides, tracing it; counts the
 * drafts cut short by a rejection (*cut) and those of them that stopped
 * inside a forward pass of draft_base_s 10 ms (*inside). */
static int cut_drafts(const char **sets, size_t n, int *cut, int *inside)
{
	struct cfg c;
	struct sim s;
	struct trace tr;
	struct err e;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	json_t *doc, *ev;
	int rc = -1;

	*cut = *inside = 0;
	if (load(&c, base_cfg, sets, n) < 0) {
		fclose(f);
		free(buf);
		return -1;
	}
	trace_begin(&tr, f);
	sim_init(&s, &c, (struct sim_opts){ .trace = &tr, .trace_tenants = 1 },
		 &e);
	if (sim_run(&s) == 0) {
		trace_end(&tr);
		rc = 0;
	} else {
		CHECK_MSG(0, "%s", e.msg);
	}
	CHECK(invariants(&s, sets[0]) == 0);
	sim_release(&s);
	cfg_release(&c);
	fclose(f);
	doc = rc == 0 ? json_loads(buf, 0, NULL) : NULL;
	free(buf);
	CHECK(rc < 0 || doc != NULL);
	json_array_foreach(json_object_get(doc, "traceEvents"), i, ev) {
		double passes = json_number_value(json_object_get(ev, "dur")) / 1e4;

		if (strcmp(json_string_value(json_object_get(ev, "name")) ?
			   json_string_value(json_object_get(ev, "name")) : "",
			   "draft") ||
		    !json_object_get(json_object_get(ev, "args"), "discarded"))
			continue;
		(*cut)++;
		*inside += fabs(passes - round(passes)) > 1e-4;
	}
	json_decref(doc);
	return rc;
}

/* A verdict that reaches a drafting edge waits for the forward pass in
 * progress (passes "whole"): a draft cut short by a rejection ran whole
 * passes; the paper's edge ("ideal") stops inside one. */
static void verdict_waits_for_pass(void)
{
	const char *sets[][4] = {
		{ "/tenants/0/count=1", "/tenants/0/wan/rtt_s=0.033",
		  "/tenants/0/device={\"draft_base_s\": 0.01, "
		  "\"prefill_per_token_s\": 0, \"passes\": \"whole\"}",
		  "/tenants/0/acceptance/alpha=0.5" },
		{ "/tenants/0/count=1", "/tenants/0/wan/rtt_s=0.033",
		  "/tenants/0/device={\"draft_base_s\": 0.01, "
		  "\"prefill_per_token_s\": 0, \"passes\": \"ideal\"}",
		  "/tenants/0/acceptance/alpha=0.5" },
	};
	int cut[2], inside[2];

	if (cut_drafts(sets[0], 4, &cut[0], &inside[0]) < 0 ||
	    cut_drafts(sets[1], 4, &cut[1], &inside[1]) < 0)
		return;
	CHECK_MSG(cut[0] >= 10 && inside[0] == 0, "whole: %d cut, %d inside a "
		  "pass", cut[0], inside[0]);
	CHECK_MSG(cut[1] >= 10 && inside[1] >= cut[1] / 2, "ideal: %d cut, %d "
		  "inside a pass", cut[1], inside[1]);
}

/* Sync at alpha 1: every block but a request's first begins with the
 * bonus token fed in its first pass, which costs two tokens at the
 * prefill rate (2 x 8 ms) instead of a 10 ms draft pass: three requests of 40 blocks
 * end 3 x 39 x 6 ms later than the paper's edge; at 4 ms a prefill token
 * the draft pass is the larger and nothing changes. */
static void bonus_fed_with_next_block(void)
{
	static const char *const ppt[2] = {
		"/tenants/0/device/prefill_per_token_s=0.008",
		"/tenants/0/device/prefill_per_token_s=0.004",
	};
	static const char *const passes[2] = {
		"/tenants/0/device/passes=\"whole\"",
		"/tenants/0/device/passes=\"ideal\"",
	};
	double end[2][2] = { { 0 } };

	for (int k = 0; k < 4; k++) {
		const char *sets[6] = { "/tenants/0/count=1",
			"/protocol/kind=\"sync\"", "/tenants/0/acceptance/alpha=1",
			"/tenants/0/workload/think_s=0", ppt[k / 2], passes[k % 2] };
		struct cfg c;
		struct sim s;

		if (load(&c, base_cfg, sets, 6) < 0 || simulate(&c, &s, NULL) < 0)
			return;
		end[k / 2][k % 2] = s.end_s;
		CHECK(invariants(&s, sets[5]) == 0);
		sim_release(&s);
		cfg_release(&c);
	}
	CHECK_MSG(fabs(end[0][0] - end[0][1] - 3 * 39 * 0.006) < 1e-9,
		  "8 ms: ends %.9g (whole) and %.9g (ideal)", end[0][0], end[0][1]);
	CHECK_MSG(end[1][0] == end[1][1], "4 ms: ends %.9g (whole) and %.9g "
		  "(ideal)", end[1][0], end[1][1]);
}

/* A trace replayed by request: request r of tenant k reads line
 * r * count + k, bit p judging the draft of output position p. Tenant 0's
 * lines accept everything, tenant 1's only the positions a sync block of
 * 4 drafts when all are accepted (not 4, 9, 14, ...: the bonus token after
 * each block), so that only a replay aligned by position sees tenant 1's
 * drafts all accepted; read as one stream, they are not. 41 tokens: 8
 * blocks of 4 and their bonus tokens, then a block of 1. */
static void trace_by_request(void)
{
	char line0[48], line1[48], text[400];
	const char *by_req[] = { "/protocol/kind=\"sync\"",
				 "/tenants/0/workload/output_tokens=41",
				 "/tenants/0/acceptance={\"model\": \"trace\", "
				 "\"file\": \"replay.bits\", \"replay\": "
				 "\"request\"}" };
	const char *stream[] = { by_req[0], by_req[1],
				 "/tenants/0/acceptance={\"model\": \"trace\", "
				 "\"file\": \"replay.bits\"}" };
	struct cfg c;
	struct sim s;

	for (int p = 0; p < 41; p++) {
		line0[p] = '1';
		line1[p] = p % 5 == 4 ? '0' : '1';
	}
	line0[41] = line1[41] = 0;
	/* lines 0, 2, 4 are tenant 0's requests, 1, 3, 5 tenant 1's */
	snprintf(text, sizeof(text), "# replay\n%s\n%s\n%s\n%s\n%s\n%s\n", line0,
		 line1, line0, line1, line0, line1);
	t_write("replay.bits", text);
	if (load(&c, base_cfg, by_req, 3) < 0)
		return;
	CHECK(c.groups[0].acc_trace.nlines == 6);
	CHECK(simulate(&c, &s, NULL) == 0);
	for (int k = 0; k < 2; k++)
		CHECK_MSG(s.t[k].st.wasted == 0 && s.t[k].st.accepted == 3 * 33,
			  "tenant %d: %llu accepted, %llu wasted", k,
			  (unsigned long long)s.t[k].st.accepted,
			  (unsigned long long)s.t[k].st.wasted);
	sim_release(&s);
	cfg_release(&c);
	if (load(&c, base_cfg, stream, 3) < 0)
		return;
	CHECK(simulate(&c, &s, NULL) == 0);
	CHECK(s.t[0].st.wasted + s.t[1].st.wasted > 0);
	sim_release(&s);
	cfg_release(&c);
}

/* The run of base_cfg under sets (tenant 0's first request, where the
 * sets make it the only one): tenant 0's sums, the invariants checked. */
static int one_request(const char **sets, size_t n, struct tenant_stat *st)
{
	struct cfg c;
	struct sim s;
	int rc = -1;

	if (load(&c, base_cfg, sets, n) < 0)
		return -1;
	if (simulate(&c, &s, NULL) == 0) {
		*st = s.t[0].st;
		rc = invariants(&s, "one request") ? -1 : 0;
		sim_release(&s);
	}
	cfg_release(&c);
	return rc;
}

/* Tenant 0's TPOT summed over its requests, base_cfg with n sets; NAN
 * when the config does not load (a failure already). */
static double tpot_of(const char **sets, size_t n)
{
	struct tenant_stat st;

	return one_request(sets, n, &st) < 0 ? NAN : st.tpot_sum;
}

/* device/draft_pair_s is the cost of the pass that feeds a bonus token
 * with the last draft: under sync at alpha 1 every block but a request's
 * first starts with one. One request of 41 tokens: 9 blocks, 8 bonus
 * passes; a 10 ms pass. A pair measured at 15 ms adds 5 ms to each; one
 * below a pass adds nothing, as the prefill-rate rule (2 x 1 ms) does. */
static void pair_pass(void)
{
	const char *sets[] = { "/tenants/0/acceptance/alpha=1",
			       "/tenants/0/count=1",
			       "/tenants/0/workload/output_tokens=41",
			       "/tenants/0/workload/requests=1",
			       "/protocol/kind=\"sync\"",
			       "/tenants/0/device/draft_pair_s=0.015" };
	const char *pairs[] = { NULL, "/tenants/0/device/draft_pair_s=0.015",
				"/tenants/0/device/draft_pair_s=0.005" };
	double tpot[3];

	for (int k = 0; k < 3; k++) {
		sets[5] = pairs[k];
		if (isnan(tpot[k] = tpot_of(sets, k ? 6 : 5)))
			return;
	}
	CHECK_MSG(fabs(tpot[1] - tpot[0] - 8 * 0.005 / 40) < 1e-9,
		  "TPOT %.9f -> %.9f", tpot[0], tpot[1]);
	CHECK_MSG(fabs(tpot[2] - tpot[0]) < 1e-12, "TPOT %.9f -> %.9f",
		  tpot[0], tpot[2]);
}

/* A pass after a pause costs the wake table's extra, and every message
 * its wan/stack_s more: the set-up of pair_pass (one request of 41 tokens
 * under sync at alpha 1, 9 blocks), each of the 8 blocks after the first
 * commit following a pause of a round trip (over 1 ms) on the device and
 * on the GPU alike. A device wake of 4 ms adds 4 ms to each of their first
 * passes, a GPU wake of 3 ms to each of their iterations, a stack of 2 ms
 * 4 ms to each round trip; and the table interpolates between its rows. */
static void wake_and_stack(void)
{
	const char *sets[] = { "/tenants/0/acceptance/alpha=1",
			       "/tenants/0/count=1",
			       "/tenants/0/workload/output_tokens=41",
			       "/tenants/0/workload/requests=1",
			       "/protocol/kind=\"sync\"", NULL };
	const char *extra[] = { NULL,
		"/tenants/0/device/wake={\"idle_s\": [0.001], "
		"\"extra_s\": [0.004]}",
		"/cloud/gpu/wake={\"idle_s\": [0.001], \"extra_s\": [0.003]}",
		"/tenants/0/wan/stack_s=0.002" };
	const double want[] = { 0, 8 * 0.004 / 40, 8 * 0.003 / 40,
				8 * 0.004 / 40 };
	struct wake w = { 3, (double[]){ 0.01, 0.02, 0.04 },
			  (double[]){ 0.001, 0.003, 0.002 } };
	double tpot[4];

	for (int k = 0; k < 4; k++) {
		sets[5] = extra[k];
		if (isnan(tpot[k] = tpot_of(sets, k ? 6 : 5)))
			return;
		CHECK_MSG(fabs(tpot[k] - tpot[0] - want[k]) < 1e-9,
			  "%s: TPOT %.9f -> %.9f", extra[k], tpot[0], tpot[k]);
	}
	CHECK(wake_extra_s(&w, 0) == 0 && wake_extra_s(&w, -1) == 0);
	CHECK(fabs(wake_extra_s(&w, 0.005) - 0.0005) < 1e-15);
	CHECK(fabs(wake_extra_s(&w, 0.015) - 0.002) < 1e-15);
	CHECK(fabs(wake_extra_s(&w, 0.03) - 0.0025) < 1e-15);
	CHECK(wake_extra_s(&w, 5) == 0.002);
}

/* A block that continues a wholly accepted one is verified without a token
 * before its drafts (the target's own prediction judges its first), as the
 * real verifier does; a block after a bonus token the edge took, or after
 * a correction, feeds that token first. Async at alpha 1 with room to
 * draft ahead: 41 drafts in 11 blocks, one token fed before them (the
 * request's first segment), after the 32-token prompt. Sync: 9 blocks
 * (8 of 4 with their bonus tokens, then 1), each with its token before. */
static void continuing_block(void)
{
	const char *sets[] = { "/tenants/0/acceptance/alpha=1",
			       "/tenants/0/count=1",
			       "/tenants/0/workload/output_tokens=41",
			       "/tenants/0/workload/requests=1",
			       "/protocol/window=8" };
	const long want[2] = { 32 + 41 + 1, 32 + 33 + 9 };

	for (int k = 0; k < 2; k++) {
		struct cfg c;
		struct sim s;

		if (k)
			sets[4] = "/protocol/kind=\"sync\"";
		if (load(&c, base_cfg, sets, 5) < 0)
			return;
		CHECK(simulate(&c, &s, NULL) == 0);
		CHECK_MSG((long)s.r[0].tokens == want[k], "%s: %llu batch tokens, "
			  "want %ld", k ? "sync" : "async",
			  (unsigned long long)s.r[0].tokens, want[k]);
		sim_release(&s);
		cfg_release(&c);
	}
}

/* A handover start (docs/protocols.md): the first token is the cloud's,
 * exactly as cloud_only's; the edge, caught up, takes the request over,
 * having prefilled every token the cloud made; "faster" declines for an
 * edge slower than the cloud, which then serves every token as cloud_only
 * does; "never" is no handover; a cloud-only protocol refuses one. */
static void handover_start(void)
{
	const char *sets[] = { "/tenants/0/count=1",
			       "/tenants/0/workload/requests=1",
			       "/tenants/0/wan/rtt_s=0.08",
			       "/protocol/kind=\"sync\"",
			       "/protocol/handover=\"always\"" };
	struct tenant_stat cloud, always, never, plain, slow, slow_cloud;
	const char *slow_sets[] = { sets[0], sets[1], sets[2],
				    "/tenants/0/device/draft_base_s=1",
				    "/protocol/kind=\"sync\"",
				    "/protocol/handover=\"faster\"" };
	struct cfg c;
	struct err e;

	if (one_request(sets, 5, &always) < 0)
		return;
	sets[3] = "/protocol/kind=\"cloud_only\"";
	sets[4] = "/protocol/handover=\"never\"";
	CHECK(one_request(sets, 5, &cloud) == 0);
	CHECK_MSG(fabs(always.ttft_sum - cloud.ttft_sum) < 1e-12, "TTFT %g, "
		  "cloud_only's %g", always.ttft_sum, cloud.ttft_sum);
	CHECK(always.handed_over == 1 && always.cloud_made >= 1 &&
	      always.cloud_made < always.tokens &&
	      always.catchup == always.cloud_made && always.blocks_sent > 0);
	/* never: the edge prefills, then drafts, as without the key */
	sets[3] = "/protocol/kind=\"sync\"";
	CHECK(one_request(sets, 5, &never) == 0);
	CHECK(one_request(sets, 4, &plain) == 0);
	CHECK(never.handed_over == 0 && never.cloud_made == 0 &&
	      never.ttft_sum == plain.ttft_sum && never.tpot_sum ==
	      plain.tpot_sum && never.ttft_sum > always.ttft_sum);
	/* faster, with an edge at a second a draft: declined */
	CHECK(one_request(slow_sets, 6, &slow) == 0);
	slow_sets[4] = "/protocol/kind=\"cloud_only\"";
	slow_sets[5] = "/protocol/handover=\"never\"";
	CHECK(one_request(slow_sets, 6, &slow_cloud) == 0);
	CHECK(slow.handed_over == 0 && slow.blocks_sent == 0 &&
	      fabs(slow.tpot_sum - slow_cloud.tpot_sum) < 1e-12 &&
	      fabs(slow.ttft_sum - slow_cloud.ttft_sum) < 1e-12);
	/* faster, an edge far faster than the cloud (an RTT of 1 ms) whose
	 * prompt is in its cache before the cloud's first token: no gap to
	 * judge by yet, so it asks again as tokens come down, and takes the
	 * request */
	{
		const char *fast[] = { sets[0], sets[1],
				       "/tenants/0/wan/rtt_s=0.001",
				       "/protocol/kind=\"sync\"",
				       "/protocol/handover=\"faster\"",
				       "/tenants/0/device/draft_base_s=0.0001",
				       "/tenants/0/device/prefill_per_token_s=1e-7",
				       "/tenants/0/acceptance/alpha=1",
				       "/tenants/0/workload/output_tokens=400" };
		struct tenant_stat f;

		CHECK(one_request(fast, 9, &f) == 0 && f.handed_over == 1 &&
		      f.ready_msgs == 1);
	}
	/* only protocols that draft on the edge hand over */
	sets[4] = "/protocol/handover=\"always\"";
	sets[3] = "/protocol/kind=\"cloud_only\"";
	CHECK(cfg_load(&c, t_write("sim.json", base_cfg), sets, 5, &e) < 0 &&
	      strstr(e.msg, "/protocol/handover: expected \"never\": only "
		     "sync and async"));
}

/* A hand-back (docs/protocols.md): with a cloud far faster a token than
 * sync speculation over an 80 ms RTT, "faster" hands the request back
 * after its first verdicts, and the cloud makes every token after it, one
 * a message; async's blocks in flight come back first. With an edge far
 * faster than the cloud it is never taken, and the run is the one
 * without the key; a cloud-only protocol refuses it. */
static void hand_back(void)
{
	const char *sets[] = { "/tenants/0/count=1",
			       "/tenants/0/workload/requests=1",
			       "/protocol/kind=\"sync\"",
			       "/protocol/handback=\"faster\"" };
	const char *fast[] = { sets[0], sets[1], sets[2], sets[3],
			       "/tenants/0/wan/rtt_s=0.001",
			       "/tenants/0/device/draft_base_s=0.00001",
			       "/tenants/0/acceptance/alpha=1" };
	struct tenant_stat back, never, async, quick, quick_never;
	struct cfg c;
	struct err e;

	if (one_request(sets, 4, &back) < 0 || one_request(sets, 3, &never) < 0)
		return;
	CHECK_MSG(back.handed_back == 1 && back.back_made > 0 &&
		  back.back_made == back.token_msgs &&
		  back.blocks_sent + back.back_made < never.blocks_sent * 4 &&
		  back.tpot_sum < never.tpot_sum, "handed back %llu, %llu "
		  "tokens after, TPOT %g against %g",
		  (unsigned long long)back.handed_back,
		  (unsigned long long)back.back_made, back.tpot_sum,
		  never.tpot_sum);
	CHECK(never.handed_back == 0 && never.back_made == 0 &&
	      never.token_msgs == 0);
	sets[2] = "/protocol/kind=\"async\"";
	CHECK(one_request(sets, 4, &async) == 0 && async.handed_back == 1 &&
	      async.back_made > 0 && async.back_made < async.tokens);
	/* an edge far faster than the cloud keeps the request */
	CHECK(one_request(fast, 7, &quick) == 0);
	fast[3] = "/protocol/handback=\"never\"";
	CHECK(one_request(fast, 7, &quick_never) == 0);
	CHECK(quick.handed_back == 0 && quick.tpot_sum == quick_never.tpot_sum &&
	      quick.ttft_sum == quick_never.ttft_sum);
	sets[2] = "/protocol/kind=\"cloud_only\"";
	CHECK(cfg_load(&c, t_write("sim.json", base_cfg), sets, 4, &e) < 0 &&
	      strstr(e.msg, "/protocol/handback: expected \"never\": only "
		     "sync and async"));
}

/* Two sequences in a pool of 4 blocks of 16 tokens; the grower preempts
 * the other first, then itself. */
struct kv_pair {
	struct kvpool *p;
	int32_t *other, *self;
	int calls;
};

static bool kv_preempt(void *ctx)
{
	struct kv_pair *k = ctx;

	k->calls++;
	if (*k->other) {
		kvpool_free(k->p, k->other);
		return false;
	}
	kvpool_free(k->p, k->self);
	return true;
}

static void kvpool_counts(void)
{
	struct kvpool p;
	int32_t a = 0, b = 0;
	struct kv_pair k = { &p, &b, &a, 0 };

	kvpool_init(&p, 4, 16);
	CHECK(kvpool_blocks_of(&p, 1) == 1 && kvpool_blocks_of(&p, 16) == 1 &&
	      kvpool_blocks_of(&p, 17) == 2 && kvpool_blocks_of(&p, 0) == 0);
	kvpool_take(&p, &a, 2);
	kvpool_take(&p, &b, 1);
	CHECK(p.used == 3 && p.peak == 3 && a == 2 && b == 1);
	CHECK(kvpool_fits(&p, 1, 0) && !kvpool_fits(&p, 1, 1) &&
	      kvpool_holds(&p, 3, 1) && !kvpool_holds(&p, 4, 1));
	/* 33 tokens need 3 blocks: a takes the last free one */
	CHECK(kvpool_grow(&p, &a, 33, kv_preempt, &k) && a == 3 && k.calls == 0);
	/* 49 need 4: b is preempted first, then it fits */
	CHECK(kvpool_grow(&p, &a, 49, kv_preempt, &k) && a == 4 && b == 0 &&
	      k.calls == 1 && p.used == 4 && p.peak == 4);
	/* 65 cannot fit at all: a itself is preempted, nothing taken */
	CHECK(!kvpool_grow(&p, &a, 65, kv_preempt, &k) && a == 0 && p.used == 0);
	kvpool_take(&p, &a, 3);
	kvpool_trim(&p, &a, 20); /* keeps the 2 blocks of 20 tokens */
	CHECK(a == 2 && p.used == 2);
	kvpool_trim(&p, &a, 64); /* never takes more */
	CHECK(a == 2 && p.used == 2 && p.peak == 4);
	kvpool_free(&p, &a);
	CHECK(a == 0 && p.used == 0);
}

const struct tcase sim_tests[] = {
	{ "sim: kvpool counts blocks; grow preempts until it fits",
	  kvpool_counts },
	{ "sim: a verdict waits for the edge's forward pass",
	  verdict_waits_for_pass },
	{ "sim: the bonus token is fed in the next block's first pass",
	  bonus_fed_with_next_block },
	{ "sim: an RTT that steps mid-run", rtt_step },
	{ "sim: a handover start: the cloud's first token, then the edge's",
	  handover_start },
	{ "sim: a hand-back: the cloud decodes the rest when it is faster",
	  hand_back },
	{ "sim: a WAN blackout holds what is sent during it", blackout },
	{ "sim: adaptive gamma settles on the model's best", adaptive_converges },
	{ "sim: policies continuous and slo take blocks in their orders",
	  policy_order },
	{ "sim: policy window holds a batch that does not fill the budget",
	  policy_window },
	{ "sim: policy dedicated gives each tenant a replica", policy_dedicated },
	{ "sim: invariants hold over 60 random configs", random_configs },
	{ "sim: async with window 1 reproduces sync exactly", async_w1_is_sync },
	{ "sim: async at alpha 1 commits at the drafting rate",
	  async_full_pipeline },
	{ "sim: a pass after a pause wakes; a message takes the hosts' stack",
	  wake_and_stack },
	{ "sim: a bonus token's pass costs the device's draft_pair_s",
	  pair_pass },
	{ "sim: a block continuing a wholly accepted one feeds no token first",
	  continuing_block },
	{ "sim: a trace replayed by request, by output position",
	  trace_by_request },
	{ "sim: equal seeds give equal rows; groups keep their draws",
	  determinism },
	{ "sim: KV admission queues requests, all finish", admission_queue },
	{ "sim: a paged KV cache preempts when full; all requests finish",
	  paged_preempts },
	{ "sim: cloud_spec runs a round's draft steps in one iteration",
	  cloud_spec_lockstep },
	{ "sim: the steady window and its cost a token", steady_window },
	{ "sim: busy shares count the measured window's time alone",
	  busy_shares_in_window },
	{ "sim: a one-token request has no TPOT and meets any bound",
	  one_token_tpot },
	{ "sim: a rate table's arrivals: where, how many, scaled",
	  rate_table },
	{ "sim: a rate rarer than one arrival a period skips the periods",
	  rate_rare },
	{ "sim: a request larger than the KV cache is an error",
	  kv_below_one_request },
	{ 0 },
};
