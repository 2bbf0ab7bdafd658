/* cli_edge.c: "hybridspec edge", an edge device of the real deployment:
 * options into an edge_setup, edge_proc_init, edge_run (deploy/edge.h). */
#include "cli.h"

#include "edge.h"
#include "jx.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EDGE_WAN "{\"rtt_s\": 0.02}" /* --wan's default */

static const struct opt_cmd edge_cmd = {
	.name = "edge",
	.usage = "[--connect HOST:PORT] [--token-file FILE]\n"
		 " [--retry-s X] [--silence-s X] [--draft NAME[:Q]]\n"
		 " [--protocol sync|async] [--gamma N|adaptive]\n"
		 " [--window N] [--handover] [--handback]\n"
		 " [--prompt TEXT] [--tokens N] [--requests N]\n"
		 " [--think-s X] [--duration-s X] [--spin]\n"
		 " [--wan JSON] [--tenant N] [--seed N] [--log FILE]\n"
		 " [--ids]",
	.about = "An edge device: drafts with the draft model (default tinystories656K in\n"
		 "w4a16), sends blocks of N drafts (default 4) to the cloud (default\n"
		 "127.0.0.1:7070), sync or async (default async, window 4), and streams\n"
		 "the committed text to stdout (token ids with --ids). --gamma adaptive:\n"
		 "each block's length chosen after every verdict, in 1..16, from the\n"
		 "alpha and the verdict latency measured, the async window up to\n"
		 "--window (default 32; docs/adaptive.md). --wan: the emulated link, as\n"
		 "a config's /tenants/i/wan (default " EDGE_WAN "). --log FILE: the\n"
		 "commit times and counters as JSON. --think-s: the pause between\n"
		 "requests (default 0); --duration-s: start no request after this\n"
		 "(--requests is then the most). --spin: poll while waiting, never\n"
		 "sleep (the CPU stays awake for the next draft step; one edge a CPU).\n"
		 "When the cloud is lost (gone, stopping, full, or silent for\n"
		 "--silence-s while the edge waits for it: default 60, 0 never) the\n"
		 "edge dials again with a doubling backoff for up to --retry-s (default\n"
		 "30; 0: fail at once) and resumes the request from its committed\n"
		 "tokens. --token-file\n"
		 "FILE or $HYBRIDSPEC_TOKEN: the shared secret the cloud asks for.\n",
	.exit_status = "0 every request done, 1 the run failed (the verifier\n"
		       "unreachable, gone or refusing this edge: another secret\n"
		       "or tokenizer; a protocol error), 2 bad usage or bad input",
};

/* The options that are not an edge_setup's as they are given. */
struct edge_args {
	struct host_port {
		char host[64];
		int port;
	} connect;
	double retry_s, silence_s, think_s, duration_s;
	long long gamma; /* 0: adaptive */
	long long window, tokens, requests, tenant, seed;
	const char *log_path; /* borrowed, or NULL */
	struct cfg_wan wan;   /* owned */
};

/* --connect: HOST:PORT (struct host_port *). */
static int parse_connect(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	struct host_port *a = dest;
	const char *colon = strrchr(arg, ':');
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	struct in_addr ip;

	if (colon && colon - arg < (long)sizeof(a->host))
		snprintf(a->host, sizeof(a->host), "%.*s", (int)(colon - arg), arg);
	if (!colon || colon - arg >= (long)sizeof(a->host) || !colon[1] ||
	    *end || port < 1 || port > 65535 ||
	    inet_pton(AF_INET, a->host, &ip) != 1) {
		snprintf(why, OPT_WHY_BYTES, "expected HOST:PORT, HOST an IPv4 "
			 "address and PORT in [1, 65535], got \"%s\"", arg);
		return -1;
	}
	a->port = (int)port;
	return 0;
}

/* --protocol: one that speculates (enum proto_kind *). */
static int parse_protocol(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	int k = cfg_name_find(cfg_proto_names, arg);

	if (k < 0 || !cfg_proto_caps((enum proto_kind)k)->speculates) {
		snprintf(why, OPT_WHY_BYTES, "expected sync or async, got \"%s\"",
			 arg);
		return -1;
	}
	*(enum proto_kind *)dest = (enum proto_kind)k;
	return 0;
}

/* --gamma: N in [1, 64], or adaptive (long long *: 0). */
static int parse_gamma(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	char *end;
	long long g = strtoll(arg, &end, 10);

	if (!strcmp(arg, "adaptive")) {
		*(long long *)dest = 0;
		return 0;
	}
	if (!*arg || *end || g < 1 || g > 64) {
		snprintf(why, OPT_WHY_BYTES, "expected an integer in [1, 64] or "
			 "adaptive, got \"%s\"", arg);
		return -1;
	}
	*(long long *)dest = g;
	return 0;
}

/* --wan: a config's /tenants/i/wan (struct cfg_wan *, which it releases
 * before it takes the new one). */
static int parse_wan(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	static const char name[] = "--wan"; /* opt puts it first already */
	json_error_t je;
	json_t *v = json_loads(arg, JSON_REJECT_DUPLICATES, &je);
	struct cfg_wan w;
	struct err e;

	if (!v) {
		snprintf(why, OPT_WHY_BYTES, "expected a JSON object, got \"%.60s\" "
			 "(at %d: %s)", arg, je.column, je.text);
		return -1;
	}
	if (cfg_wan_read(name, v, &w, &e) < 0) {
		json_decref(v);
		cfg_wan_release(&w);
		snprintf(why, OPT_WHY_BYTES, "%s", strncmp(e.msg, name, strlen(name))
			 ? e.msg : e.msg + strlen(name) + 2);
		return -1;
	}
	json_decref(v);
	cfg_wan_release(dest);
	*(struct cfg_wan *)dest = w;
	return 0;
}

/* argv into s and a, and the defaults that hang on what was given: OPT_GO,
 * or the exit status. */
static int edge_parse(struct edge_setup *s, struct edge_args *a, int argc,
		      char **argv)
{
	char why[OPT_WHY_BYTES];
	double rtt;
	struct opt rows[] = {
		OPT_PARSE("connect", 0, &a->connect, "HOST:PORT", parse_connect,
			  "the cloud (default 127.0.0.1:7070)"),
		CLI_OPT_TOKEN_FILE(&s->token_file),
		OPT_NUM("retry-s", 0, &a->retry_s, "X", 0, INFINITY,
			"dial a lost cloud again for X (default 30)"),
		OPT_NUM("silence-s", 0, &a->silence_s, "X", 0, INFINITY,
			"the cloud is lost when it says nothing\nfor X while "
			"the edge waits for it (default 60; 0: never)"),
		CLI_OPT_MODEL_SPEC("draft", &s->draft, "the draft (default "
				   "tinystories656K; Q default w4a16)"),
		OPT_PARSE("protocol", 0, &s->o.proto, "sync|async", parse_protocol,
			  "the protocol (default async)"),
		OPT_PARSE("gamma", 0, &a->gamma, "N|adaptive", parse_gamma,
			  "drafts a block, 1 to 64 (default 4), or adaptive"),
		OPT_INT("window", 0, &a->window, "N", 1, 64,
			"async: blocks in flight at most\n"
			"(default 4; with --gamma adaptive 32)"),
		OPT_FLAG("handover", 0, &s->o.handover, "a handover start: the "
			 "cloud decodes\nwhile the edge prefills and catches up, "
			 "then the edge drafts on\n(docs/protocols.md)"),
		OPT_FLAG("handback", 0, &s->o.handback, "a hand-back: the edge "
			 "hands the rest of a\nrequest to the cloud when the "
			 "cloud's time a token,\nas its verdicts show, beats "
			 "the protocol's\n(docs/protocols.md)"),
		OPT_STR("prompt", 0, &s->prompt, "TEXT",
			"every request's prompt (default \"Once upon a time\")"),
		OPT_INT("tokens", 0, &a->tokens, "N", 1, 1 << 20,
			"tokens a request generates (default 64)"),
		OPT_INT("requests", 0, &a->requests, "N", 1, 1 << 20,
			"requests, one after another (default 1)"),
		OPT_NUM("think-s", 0, &a->think_s, "X", 0, INFINITY,
			"the pause between requests (default 0)"),
		OPT_NUM("duration-s", 0, &a->duration_s, "X", 0, INFINITY,
			"start no request after X (default 0: no limit)"),
		OPT_FLAG("spin", 0, &s->o.spin, "poll while waiting, never sleep"),
		OPT_PARSE("wan", 0, &a->wan, "JSON", parse_wan,
			  "the emulated link (default " EDGE_WAN ")"),
		OPT_INT("tenant", 0, &a->tenant, "N", 0, UINT32_MAX,
			"the tenant's id in its hello (default 0)"),
		CLI_OPT_SEED(&a->seed, "the delay and think-time draws' seed (default 1)"),
		OPT_STR("log", 0, &a->log_path, "FILE",
			"the commit times and counters as JSON"),
		OPT_FLAG("ids", 0, &s->ids, "print token ids, not text"),
		OPT_END,
	};
	int rc = opt_parse(&edge_cmd, rows, &argc, argv);

	if (rc != OPT_GO)
		return rc;
	if (!opt_given(rows, "wan") && parse_wan(EDGE_WAN, &a->wan, why) < 0)
		HS_ASSERT(!"--wan's default reads");
	if (opt_given(rows, "window") && !cfg_proto_caps(s->o.proto)->windowed)
		return cli_fail("edge: --window is async's blocks in flight; %s "
				"has one", cfg_proto_names[s->o.proto]);
	if (!a->gamma && !opt_given(rows, "window"))
		a->window = 32;
	rtt = dist_mean(cfg_wan_rtt(&a->wan, 0));
	if (a->silence_s > 0 && a->silence_s <= rtt)
		return cli_fail("edge: --silence-s %g is no longer than the "
				"link's round trip (%g s): no answer could come "
				"in it", a->silence_s, rtt);
	return OPT_GO;
}

/* edge_run, its log saved to log_path (NULL: not): the exit status. */
static int run(const struct edge_proc *p, const char *log_path)
{
	struct err e;
	json_t *log = edge_run(&p->o, &e);

	if (!log) {
		cli_fail("%s", e.msg);
		return CLI_FAILED;
	}
	if (log_path && jx_save(log_path, log, &e) < 0) {
		json_decref(log);
		cli_fail("%s", e.msg);
		return CLI_FAILED; /* drafted, but its log is lost */
	}
	json_decref(log);
	return CLI_OK;
}

int cli_edge(int argc, char **argv)
{
	static const char *const log_keys[] = { "drafted", "judged",
		"verdicts", "reconnects", NULL }; /* its log's, as edge_run makes it */
	struct edge_setup s = { .draft = "tinystories656K",
				.prompt = "Once upon a time",
				.o = { .proto = PROTO_ASYNC } };
	struct edge_args a = { .connect = { "127.0.0.1", 7070 }, .retry_s = 30,
			       .silence_s = EDGE_SILENCE_S, .gamma = 4,
			       .window = 4, .tokens = 64, .requests = 1,
			       .seed = 1 };
	struct edge_proc p;
	struct err e;
	int rc;

	if ((rc = edge_parse(&s, &a, argc, argv)) == OPT_GO) {
		s.adaptive = !a.gamma;
		s.o.host = a.connect.host;
		s.o.port = a.connect.port;
		s.o.retry_s = a.retry_s;
		s.o.silence_s = a.silence_s;
		s.o.tenant = (uint32_t)a.tenant;
		s.o.gamma = s.adaptive ? 4 : (int)a.gamma;
		s.o.window = (int)a.window;
		s.o.wan = &a.wan;
		s.o.seed = (uint64_t)a.seed;
		s.o.out_n = (int)a.tokens;
		s.o.requests = (int)a.requests;
		s.o.think_s = dist_constant(a.think_s);
		s.o.stop_s = a.duration_s;
		s.o.text = stdout;
		/* its log: one it wrote, or none, checked before it drafts */
		if (a.log_path && jx_replaceable(a.log_path, log_keys, NULL,
						 true, &e) < 0) {
			rc = cli_fail("%s", e.msg);
		} else if (edge_proc_init(&p, &s, &e) < 0) {
			rc = cli_fail("%s", e.msg);
		} else {
			rc = run(&p, a.log_path);
			edge_proc_release(&p);
		}
	}
	cfg_wan_release(&a.wan);
	return rc;
}
