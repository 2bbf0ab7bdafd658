/* cli_serve.c: "hybridspec serve", the cloud verifier of the real
 * deployment: options into a serve_setup, serve_proc_init, serve_run
 * (deploy/serve.h). */
#include "cli.h"

#include "jx.h"
#include "rt.h"
#include "serve.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static const struct opt_cmd serve_cmd = {
	.name = "serve",
	.usage = "[--model NAME[:Q]] [--listen ADDR] [--port N]\n"
		 " [--token-file FILE] [--policy continuous|window]\n"
		 " [--max-batch-tokens N] [--prefill-chunk N]\n"
		 " [--kv-blocks N] [--block-tokens N] [--watermark-blocks N]\n"
		 " [--max-num-seqs N]\n"
		 " [--window-s X] [--max-clients N] [--max-per-addr N]\n"
		 " [--hello-timeout-s X] [--frame-timeout-s X]\n"
		 " [--idle-timeout-s X] [--drain-s X] [--exit-after N]\n"
		 " [--threads N] [--stats FILE] [--log FILE]\n"
		 " [--log-every-s X] [--spin] [--verbose]",
	.about = "The cloud verifier: holds the target model (default tinystories656K in\n"
		 "f32) and verifies the draft blocks of every connected edge in batches of\n"
		 "at most N tokens (default 256), prompts prefilled in chunks (default\n"
		 "64). --kv-blocks N pages the KV cache as the simulator's paged policy\n"
		 "does (docs/protocols.md): a pool of N blocks of --block-tokens (default\n"
		 "16), admissions leaving --watermark-blocks free (default 0), at most\n"
		 "--max-num-seqs requests at once (default: the slots), preemption by\n"
		 "recompute; without it every slot holds its whole context.\n"
		 "\n"
		 "Listens on ADDR:N (default 127.0.0.1:7070, this machine only; port 0\n"
		 "picks one and prints it); any other ADDR needs a shared secret, the\n"
		 "first line of --token-file FILE or $HYBRIDSPEC_TOKEN (1 to 32 bytes),\n"
		 "which every edge's hello must carry.\n"
		 "\n"
		 "Limits: --max-clients slots (default 64; one more is told \"server\n"
		 "full\"), --max-per-addr connections from one address (default 0:\n"
		 "any), hello within --hello-timeout-s of connecting (default 5), a\n"
		 "frame whole within --frame-timeout-s of its first byte (default 10),\n"
		 "a client neither sending nor owed a verdict cut off after\n"
		 "--idle-timeout-s (default 300); a timeout of 0 is none. On SIGINT\n"
		 "or SIGTERM: new work is refused with the reason, the blocks already\n"
		 "queued are answered, and the server exits once none is left or after\n"
		 "--drain-s (default 5); a second signal stops it at once.\n"
		 "--exit-after N: stop once N clients have come and gone.\n"
		 "--stats FILE: the counters as JSON at exit; --log FILE: a JSON line of\n"
		 "counters every --log-every-s (default 10): verdicts a second, verdict\n"
		 "latency p50 and p99, RSS. --spin: poll without sleeping (keeps the CPU\n"
		 "awake, as a GPU server's host thread spins; give it a CPU of its own).\n"
		 "Wire protocol and threat model: docs/deploy.md.\n",
	.exit_status = "0 stopped cleanly (SIGINT, SIGTERM or --exit-after), 1 it\n"
		       "failed while serving (a socket error), 2 bad usage or bad input",
	.needs = { { "block-tokens", "kv-blocks" },
		   { "watermark-blocks", "kv-blocks" },
		   { "max-num-seqs", "kv-blocks" },
		   { "log-every-s", "log" } },
};

/* The options that are not a serve_setup's as they are given. */
struct serve_args {
	long long port, budget, chunk, clients, per_addr, after, threads;
	long long kv_blocks, block_tokens, watermark, max_seqs;
	const char *stats; /* borrowed: the counters' file, or NULL */
};

/* --policy: a policy the real verifier has (enum sched_policy *). */
static int parse_policy(const char *arg, void *dest, char why[OPT_WHY_BYTES])
{
	int p = cfg_name_find(cfg_sched_names, arg);

	if (p < 0 || !cfg_sched_deployed((enum sched_policy)p)) {
		snprintf(why, OPT_WHY_BYTES,
			 "expected continuous or window, got \"%s\"", arg);
		return -1;
	}
	*(enum sched_policy *)dest = (enum sched_policy)p;
	return 0;
}

/* argv into s and a: OPT_GO, or the exit status. */
static int serve_parse(struct serve_setup *s, struct serve_args *a, int argc,
		       char **argv)
{
	struct serve_opts *o = &s->o;
	struct opt rows[] = {
		CLI_OPT_MODEL_SPEC("model", &s->model, "the target (default "
				   "tinystories656K; Q default f32)"),
		OPT_STR("listen", 0, &s->host, "ADDR",
			"the IPv4 address to listen on (default 127.0.0.1)"),
		OPT_INT("port", 0, &a->port, "N", 0, 65535,
			"the port (default 7070; 0: any free one)"),
		CLI_OPT_TOKEN_FILE(&s->token_file),
		OPT_PARSE("policy", 0, &o->policy, "continuous|window", parse_policy,
			  "how batches form (default continuous)"),
		OPT_INT("max-batch-tokens", 0, &a->budget, "N", 2, 1 << 20,
			"tokens a batch at most (default 256)"),
		OPT_INT("prefill-chunk", 0, &a->chunk, "N", 1, 1 << 20,
			"a prompt's tokens a batch at most (default 64)"),
		OPT_INT("kv-blocks", 0, &a->kv_blocks, "N", 0, 1LL << 40,
			"the paged KV pool (default 0: unpaged)"),
		OPT_INT("block-tokens", 0, &a->block_tokens, "N", 1, 1 << 16,
			"tokens a KV block (default 16)"),
		OPT_INT("watermark-blocks", 0, &a->watermark, "N", 0, 1 << 30,
			"blocks an admission leaves free (default 0)"),
		OPT_INT("max-num-seqs", 0, &a->max_seqs, "N", 0, 4096,
			"requests admitted at once (default 0: the slots)"),
		OPT_NUM("window-s", 0, &o->window_s, "X", 0, INFINITY,
			"the window policy's wait for a batch (default 0.002)"),
		OPT_INT("max-clients", 0, &a->clients, "N", 1, 4096,
			"client slots (default 64)"),
		OPT_INT("max-per-addr", 0, &a->per_addr, "N", 0, 4096,
			"connections from one address (default 0: any)"),
		OPT_NUM("hello-timeout-s", 0, &o->hello_s, "X", 0, INFINITY,
			"a hello within X of connecting\n(default 5; 0: no limit)"),
		OPT_NUM("frame-timeout-s", 0, &o->frame_s, "X", 0, INFINITY,
			"a frame whole within X of its first byte\n"
			"(default 10; 0: no limit)"),
		OPT_NUM("idle-timeout-s", 0, &o->idle_s, "X", 0, INFINITY,
			"cut off a client neither sending nor owed a\n"
			"verdict for X (default 300; 0: never)"),
		OPT_NUM("drain-s", 0, &o->drain_s, "X", 0, INFINITY,
			"after SIGINT or SIGTERM, answer what is queued\n"
			"for at most X (default 5; 0: stop at once)"),
		OPT_INT("exit-after", 0, &a->after, "N", 0, INT_MAX,
			"stop once N clients have come and gone\n"
			"(default 0: at a signal)"),
		CLI_OPT_THREADS(&a->threads, 256,
				"the target's linear layers on N threads (default 1)"),
		OPT_STR("stats", 0, &a->stats, "FILE", "the counters as JSON at exit"),
		OPT_STR("log", 0, &s->log_path, "FILE",
			"a JSON line of counters every --log-every-s"),
		OPT_NUM("log-every-s", 0, &o->log_every_s, "X", 0.001, INFINITY,
			"the log's period (default 10)"),
		OPT_FLAG("spin", 0, &o->spin, "poll without sleeping"),
		OPT_FLAG("verbose", 0, &o->verbose, "a line per client event on stderr"),
		OPT_END,
	};

	int rc = opt_parse(&serve_cmd, rows, &argc, argv);

	if (rc == OPT_GO && opt_given(rows, "window-s") &&
	    cfg_sched_hold_s(o->policy, 1) == 0) /* a policy that never holds */
		return cli_fail("serve: --window-s is the window policy's wait: "
				"give --policy window with it");
	return rc;
}

int cli_serve(int argc, char **argv)
{
	static const char *const stats_keys[] = { "clients", "iterations",
		"verdicts", "busy_s", NULL }; /* its --stats', as serve_run makes them */
	struct serve_setup s = {
		.model = "tinystories656K", .host = "127.0.0.1",
		.o = { .policy = SCHED_CONTINUOUS, .window_s = 0.002, .hello_s = 5,
		       .frame_s = 10, .idle_s = 300, .drain_s = 5,
		       .log_every_s = 10 },
	};
	struct serve_args a = { .port = 7070, .budget = 256, .chunk = 64,
				.clients = 64, .threads = 1, .block_tokens = 16 };
	struct serve_proc p;
	struct err e;
	json_t *st;
	int rc;

	if ((rc = serve_parse(&s, &a, argc, argv)) != OPT_GO)
		return rc;
	s.port = (int)a.port;
	s.threads = (int)a.threads;
	s.o.budget = (int)a.budget;
	s.o.chunk = (int)a.chunk;
	s.o.max_clients = (int)a.clients;
	s.o.max_per_addr = (int)a.per_addr;
	s.o.exit_after = (int)a.after;
	s.o.kv_blocks = (long)a.kv_blocks;
	s.o.block_tokens = (int)a.block_tokens;
	s.o.watermark = (int)a.watermark;
	s.o.max_seqs = (int)(a.max_seqs ? a.max_seqs : a.clients);
	if (a.kv_blocks && a.watermark >= a.kv_blocks)
		return cli_fail("serve: --watermark-blocks %lld leaves none of "
				"--kv-blocks %lld to admit a request with",
				a.watermark, a.kv_blocks);
	if (a.stats && s.log_path && !strcmp(a.stats, s.log_path))
		return cli_fail("serve: --stats and --log name one file, '%s'",
				a.stats);
	/* the files it writes, checked before it serves: its own or none */
	if ((a.stats && jx_replaceable(a.stats, stats_keys, NULL, true, &e) < 0) ||
	    (s.log_path && jx_replaceable(s.log_path, NULL, SERVE_LOG_HEAD, true, &e) < 0))
		return cli_fail("%s", e.msg);
	rt_signals_catch(); /* from the model's load to the stats written */
	if (serve_proc_init(&p, &s, &e) < 0) {
		rt_signals_restore();
		return cli_fail("%s", e.msg);
	}
	fprintf(stderr, "serve: %s on %s:%d, %s batches of %d tokens, %s\n",
		s.model, s.host, p.port, cfg_sched_names[s.o.policy], s.o.budget,
		p.o.secret ? "secret required" : "no secret");
	st = serve_run(&p.o, &e);
	serve_proc_release(&p);
	if (!st) {
		rt_signals_restore();
		cli_fail("%s", e.msg);
		return CLI_FAILED;
	}
	rc = a.stats && jx_save(a.stats, st, &e) < 0 ? -1 : 0;
	rt_signals_restore();
	json_decref(st);
	if (rc < 0) {
		cli_fail("%s", e.msg);
		return CLI_FAILED; /* served, but its counters are lost */
	}
	return CLI_OK;
}
