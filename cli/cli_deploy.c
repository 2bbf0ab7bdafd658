/* cli_deploy.c: "hybridspec serve" and "hybridspec edge": the real
 * deployment's two programs, each a set of options around serve_run and
 * edge_run. */
#include "cli.h"
#include "rt.h"

#include "edge.h"
#include "jx.h"
#include "mload.h"
#include "pool.h"
#include "serve.h"
#include "wire.h"
#include "mem.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char serve_help[] =
	"usage: hybridspec serve [--model NAME[:Q]] [--listen ADDR] [--port N]\n"
	"                        [--token-file FILE] [--policy continuous|window]\n"
	"                        [--max-batch-tokens N] [--prefill-chunk N]\n"
	"                        [--window-s X] [--max-clients N] [--max-per-addr N]\n"
	"                        [--hello-timeout-s X] [--frame-timeout-s X]\n"
	"                        [--idle-timeout-s X] [--drain-s X] [--exit-after N]\n"
	"                        [--threads N] [--stats FILE] [--log FILE]\n"
	"                        [--log-every-s X] [--spin] [--verbose]\n"
	"\n"
	"The cloud verifier: holds the target model (default tinystories656K in\n"
	"f32) and verifies the draft blocks of every connected edge in batches of\n"
	"at most N tokens (default 256), prompts prefilled in chunks (default\n"
	"64). Listens on ADDR:N (default 127.0.0.1:7070, this machine only; port\n"
	"0 picks one and prints it); any other ADDR needs a shared secret, the\n"
	"first line of --token-file FILE or $HYBRIDSPEC_TOKEN (1 to 32 bytes),\n"
	"which every edge's hello must carry.\n"
	"\n"
	"Limits (0: none): --max-clients slots (default 64; one more is told\n"
	"\"server full\"), --max-per-addr connections from one address (default\n"
	"0), hello within --hello-timeout-s of connecting (default 5), a frame\n"
	"whole within --frame-timeout-s of its first byte (default 10), a client\n"
	"neither sending nor owed a verdict cut off after --idle-timeout-s\n"
	"(default 300). On SIGINT or SIGTERM: new work is refused with the\n"
	"reason, the blocks already queued are answered, and the server exits\n"
	"once none is left or after --drain-s (default 5); a second signal stops\n"
	"it at once. --exit-after N: stop once N clients have come and gone.\n"
	"--stats FILE: the counters as JSON at exit; --log FILE: a JSON line of\n"
	"counters every --log-every-s (default 10): verdicts a second, verdict\n"
	"latency p50 and p99, RSS. --spin: poll without sleeping (keeps the CPU\n"
	"awake, as a GPU server's host thread spins; give it a CPU of its own).\n"
	"Wire protocol and threat model: docs/deploy.md.\n"
	"\nexit status: 0 stopped cleanly (SIGINT, SIGTERM or --exit-after), 1 it\n"
	"failed while serving (a socket error), 2 bad usage or bad input\n";

static const char edge_help[] =
	"usage: hybridspec edge [--connect HOST:PORT] [--token-file FILE]\n"
	"                       [--retry-s X] [--draft NAME[:Q]]\n"
	"                       [--protocol sync|async] [--gamma N|adaptive]\n"
	"                       [--window N]\n"
	"                       [--prompt TEXT] [--tokens N] [--requests N]\n"
	"                       [--think-s X] [--duration-s X] [--spin]\n"
	"                       [--wan JSON] [--tenant N] [--seed N] [--log FILE]\n"
	"                       [--ids]\n"
	"\n"
	"An edge device: drafts with the draft model (default tinystories656K in\n"
	"w4a16), sends blocks of N drafts (default 4) to the cloud (default\n"
	"127.0.0.1:7070), sync or async (default async, window 4), and streams\n"
	"the committed text to stdout (token ids with --ids). --gamma adaptive:\n"
	"each block's length chosen after every verdict, in 1..16, from the\n"
	"alpha and the verdict latency measured, the async window up to\n"
	"--window (default 32; docs/adaptive.md). --wan: the emulated link, as\n"
	"a config's /tenants/i/wan (default {\"rtt_s\": 0.02}). --log FILE: the\n"
	"commit times and counters as JSON. --think-s: the pause between\n"
	"requests (default 0); --duration-s: start no request after this\n"
	"(--requests is then the most). --spin: poll while waiting, never\n"
	"sleep (the CPU stays awake for the next draft step; one edge a CPU).\n"
	"When the cloud is lost (gone,\n"
	"stopping, full) the edge dials again with a doubling backoff for up to\n"
	"--retry-s (default 30; 0: fail at once) and resumes the request from\n"
	"its committed tokens. --token-file FILE or $HYBRIDSPEC_TOKEN: the\n"
	"shared secret the cloud asks for.\n"
	"\nexit status: 0 every request done, 1 the run failed (the verifier\n"
	"unreachable or gone, a protocol error), 2 bad usage or bad input\n";

/* A run that failed after its input was accepted. */
static int failed(const struct err *e)
{
	fprintf(stderr, "hybridspec: %s\n", e->msg);
	return CLI_FAILED;
}

static void print_json_file(json_t *o, const char *path, struct err *e)
{
	if (path && jx_save(path, o, e) < 0)
		fprintf(stderr, "hybridspec: %s\n", e->msg);
}

/* The shared secret: --token-file's, else $HYBRIDSPEC_TOKEN's. Returns 1
 * with s filled, 0 for none, -1 with e's message. */
static int load_secret(const char *file, uint8_t s[WIRE_SECRET_BYTES],
		       struct err *e)
{
	const char *env = getenv("HYBRIDSPEC_TOKEN");

	if (file)
		return wire_secret_load(file, s, e) < 0 ? -1 : 1;
	if (env)
		return wire_secret_parse("$HYBRIDSPEC_TOKEN", env, s, e) < 0 ? -1 : 1;
	return 0;
}

/* Whether an IPv4 address in dotted quads is this machine's loopback. */
static bool loopback(const char *addr)
{
	return !strncmp(addr, "127.", 4);
}

int cli_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "listen", required_argument, NULL, 'H' },
		{ "token-file", required_argument, NULL, 'k' },
		{ "max-per-addr", required_argument, NULL, 'A' },
		{ "hello-timeout-s", required_argument, NULL, 'O' },
		{ "frame-timeout-s", required_argument, NULL, 'F' },
		{ "idle-timeout-s", required_argument, NULL, 'I' },
		{ "drain-s", required_argument, NULL, 'D' },
		{ "log", required_argument, NULL, 'l' },
		{ "log-every-s", required_argument, NULL, 'L' },
		{ "port", required_argument, NULL, 'p' },
		{ "policy", required_argument, NULL, 'P' },
		{ "max-batch-tokens", required_argument, NULL, 'b' },
		{ "prefill-chunk", required_argument, NULL, 'c' },
		{ "window-s", required_argument, NULL, 'w' },
		{ "max-clients", required_argument, NULL, 'C' },
		{ "exit-after", required_argument, NULL, 'x' },
		{ "threads", required_argument, NULL, 'T' },
		{ "stats", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "spin", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *model = "tinystories656K", *host = "127.0.0.1", *stats = NULL,
		   *token_file = NULL, *log_path = NULL;
	long long port = 7070, budget = 256, chunk = 64, clients = 64, after = 0,
		  threads = 1, per_addr = 0;
	double window_s = 0.002;
	struct serve_opts so = { .policy = SCHED_CONTINUOUS, .hello_s = 5,
				 .frame_s = 10, .idle_s = 300, .drain_s = 5,
				 .log_every_s = 10 };
	uint8_t secret[WIRE_SECRET_BYTES];
	FILE *logf = NULL;
	struct quant q;
	struct llama m;
	struct tok t;
	struct err e;
	json_t *st;
	int ch, p, pol;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'm': model = optarg; break;
		case 'H': host = optarg; break;
		case 's': stats = optarg; break;
		case 'k': token_file = optarg; break;
		case 'l': log_path = optarg; break;
		case 'v': so.verbose = true; break;
		case 'A':
			if (cli_long("--max-per-addr", optarg, 0, 4096, &per_addr))
				return CLI_BAD_INPUT;
			break;
		case 'O':
			if (cli_double("--hello-timeout-s", optarg, 0, &so.hello_s))
				return CLI_BAD_INPUT;
			break;
		case 'F':
			if (cli_double("--frame-timeout-s", optarg, 0, &so.frame_s))
				return CLI_BAD_INPUT;
			break;
		case 'I':
			if (cli_double("--idle-timeout-s", optarg, 0, &so.idle_s))
				return CLI_BAD_INPUT;
			break;
		case 'D':
			if (cli_double("--drain-s", optarg, 0, &so.drain_s))
				return CLI_BAD_INPUT;
			break;
		case 'L':
			if (cli_double("--log-every-s", optarg, 0.001, &so.log_every_s))
				return CLI_BAD_INPUT;
			break;
		case 'S': so.spin = true; break;
		case 'P':
			if ((pol = cfg_name_find(cfg_sched_names, optarg)) < 0 ||
			    !cfg_sched_deployed((enum sched_policy)pol))
				return cli_fail("--policy: expected continuous or "
						"window, got '%s'", optarg);
			so.policy = (enum sched_policy)pol;
			break;
		case 'p':
			if (cli_long("--port", optarg, 0, 65535, &port))
				return CLI_BAD_INPUT;
			break;
		case 'b':
			if (cli_long("--max-batch-tokens", optarg, 2, 1 << 20, &budget))
				return CLI_BAD_INPUT;
			break;
		case 'c':
			if (cli_long("--prefill-chunk", optarg, 1, 1 << 20, &chunk))
				return CLI_BAD_INPUT;
			break;
		case 'w':
			if (cli_double("--window-s", optarg, 0, &window_s))
				return CLI_BAD_INPUT;
			break;
		case 'C':
			if (cli_long("--max-clients", optarg, 1, 4096, &clients))
				return CLI_BAD_INPUT;
			break;
		case 'x':
			if (cli_long("--exit-after", optarg, 0, LLONG_MAX, &after))
				return CLI_BAD_INPUT;
			break;
		case 'T':
			if (cli_long("--threads", optarg, 1, 256, &threads))
				return CLI_BAD_INPUT;
			break;
		case 'h':
			fputs(serve_help, stdout);
			return CLI_OK;
		default:
			fputs(serve_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc) {
		fputs(serve_help, stderr);
		return CLI_BAD_INPUT;
	}
	switch (load_secret(token_file, secret, &e)) {
	case -1:
		return cli_fail("%s", e.msg);
	case 1:
		so.secret = secret;
		break;
	default:
		if (!loopback(host))
			return cli_fail("--listen %s: a server reachable from other "
					"machines needs a shared secret (--token-file "
					"FILE or $HYBRIDSPEC_TOKEN)", host);
	}
	if (log_path && !(logf = fopen(log_path, "w")))
		return cli_fail("--log %s: %s", log_path, strerror(errno));
	so.log = logf;
	if (mload_spec(model, "f32", &m, &t, &q, &e) < 0) {
		if (logf)
			fclose(logf);
		return cli_fail("%s", e.msg);
	}
	p = (int)port;
	so.listen_fd = serve_listen(host, &p, &e);
	if (so.listen_fd < 0) {
		llama_release(&m);
		tok_release(&t);
		if (logf)
			fclose(logf);
		return cli_fail("%s", e.msg);
	}
	if (threads > 1)
		m.pool = kern_pool_new((int)threads);
	fprintf(stderr, "serve: %s on %s:%d, %s batches of %lld tokens, %s\n",
		model, host, p, cfg_sched_names[so.policy], budget,
		so.secret ? "secret required" : "no secret");
	so.m = &m;
	so.budget = (int)budget;
	so.chunk = (int)chunk;
	so.window_s = window_s;
	so.max_clients = (int)clients;
	so.max_per_addr = (int)per_addr;
	so.exit_after = (int)after;
	so.t0_s = rt_now_s();
	st = serve_run(&so, &e);
	if (st)
		print_json_file(st, stats, &e);
	json_decref(st);
	if (logf)
		fclose(logf);
	if (m.pool)
		kpool_free(m.pool);
	llama_release(&m);
	tok_release(&t);
	return st ? CLI_OK : failed(&e);
}

/* "HOST:PORT" into host (64 bytes) and *port; -1 with e's message. */
static int parse_addr(const char *addr, char *host, int *port, struct err *e)
{
	const char *colon = strrchr(addr, ':');
	long long p;

	if (!colon || colon - addr >= 64 ||
	    cli_long("--connect", colon + 1, 1, 65535, &p))
		return err_set(e, "--connect: expected HOST:PORT, got '%s'", addr);
	snprintf(host, 64, "%.*s", (int)(colon - addr), addr);
	*port = (int)p;
	return 0;
}

int cli_edge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "connect", required_argument, NULL, 'c' },
		{ "token-file", required_argument, NULL, 'k' },
		{ "retry-s", required_argument, NULL, 'R' },
		{ "think-s", required_argument, NULL, 'K' },
		{ "spin", no_argument, NULL, 'S' },
		{ "duration-s", required_argument, NULL, 'U' },
		{ "draft", required_argument, NULL, 'd' },
		{ "protocol", required_argument, NULL, 'P' },
		{ "gamma", required_argument, NULL, 'g' },
		{ "window", required_argument, NULL, 'w' },
		{ "prompt", required_argument, NULL, 'p' },
		{ "tokens", required_argument, NULL, 'n' },
		{ "requests", required_argument, NULL, 'r' },
		{ "wan", required_argument, NULL, 'W' },
		{ "tenant", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "ids", no_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *addr = "127.0.0.1:7070", *draft = "tinystories656K",
		   *prompt = "Once upon a time", *wan_text = "{\"rtt_s\": 0.02}",
		   *log_path = NULL, *token_file = NULL;
	bool window_given = false;
	uint8_t secret[WIRE_SECRET_BYTES];
	double retry_s = 30, think_s = 0, duration_s = 0;
	long long gamma = 4, window = 4, tokens = 64, requests = 1, tenant = 0,
		  seed = 1;
	bool ids = false;
	struct edge_opts eo = { .proto = PROTO_ASYNC };
	struct cfg_wan wan;
	struct quant q;
	struct llama m;
	struct tok t;
	struct err e;
	json_t *wj, *log;
	int ch, kind, *prompts, np, port = 0, have_secret;
	bool too_long;
	char host[64];

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': addr = optarg; break;
		case 'k': token_file = optarg; break;
		case 'S': eo.spin = true; break;
		case 'R':
			if (cli_double("--retry-s", optarg, 0, &retry_s))
				return CLI_BAD_INPUT;
			break;
		case 'K':
			if (cli_double("--think-s", optarg, 0, &think_s))
				return CLI_BAD_INPUT;
			break;
		case 'U':
			if (cli_double("--duration-s", optarg, 0, &duration_s))
				return CLI_BAD_INPUT;
			break;
		case 'd': draft = optarg; break;
		case 'p': prompt = optarg; break;
		case 'W': wan_text = optarg; break;
		case 'l': log_path = optarg; break;
		case 'i': ids = true; break;
		case 'P':
			if ((kind = cfg_name_find(cfg_proto_names, optarg)) < 0 ||
			    !cfg_proto_caps((enum proto_kind)kind)->speculates)
				return cli_fail("--protocol: expected sync or async, "
						"got '%s'", optarg);
			eo.proto = (enum proto_kind)kind;
			break;
		case 'g':
			if (!strcmp(optarg, "adaptive")) {
				/* bounds and weight as a config's defaults */
				eo.adapt = (struct cfg_adapt){ true, 1, 16, 0.05 };
				gamma = 4;
				if (!window_given)
					window = 32;
			} else if (cli_long("--gamma", optarg, 1, 64, &gamma)) {
				return CLI_BAD_INPUT;
			}
			break;
		case 'w':
			if (cli_long("--window", optarg, 1, 64, &window))
				return CLI_BAD_INPUT;
			window_given = true;
			break;
		case 'n':
			if (cli_long("--tokens", optarg, 1, 1 << 20, &tokens))
				return CLI_BAD_INPUT;
			break;
		case 'r':
			if (cli_long("--requests", optarg, 1, 1 << 20, &requests))
				return CLI_BAD_INPUT;
			break;
		case 't':
			if (cli_long("--tenant", optarg, 0, UINT32_MAX, &tenant))
				return CLI_BAD_INPUT;
			break;
		case 's':
			if (cli_long("--seed", optarg, 0, LLONG_MAX, &seed))
				return CLI_BAD_INPUT;
			break;
		case 'h':
			fputs(edge_help, stdout);
			return CLI_OK;
		default:
			fputs(edge_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc) {
		fputs(edge_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (parse_addr(addr, host, &port, &e) < 0 ||
	    (have_secret = load_secret(token_file, secret, &e)) < 0)
		return cli_fail("%s", e.msg);
	wj = json_loads(wan_text, 0, NULL);
	if (!wj)
		return cli_fail("--wan: not JSON: %s", wan_text);
	if (cfg_wan_read("--wan", wj, &wan, &e) < 0) {
		json_decref(wj);
		return cli_fail("%s", e.msg);
	}
	if (mload_spec(draft, "w4a16", &m, &t, &q, &e) < 0) {
		json_decref(wj);
		cfg_wan_release(&wan);
		return cli_fail("%s", e.msg);
	}
	prompts = xmalloc(sizeof(int) * (strlen(prompt) + 3));
	np = tok_encode(&t, prompt, 1, 0, prompts);
	log = NULL;
	too_long = np + tokens > m.c.seq_len;
	if (too_long) {
		cli_fail("%d prompt + %lld tokens: the model's context is %d", np,
			 tokens, m.c.seq_len);
	} else {
		int *all = xmalloc(sizeof(int) * (size_t)np * (size_t)requests);

		for (long long r = 0; r < requests; r++)
			memcpy(all + r * np, prompts, sizeof(int) * (size_t)np);
		eo.m = &m;
		eo.tk = ids ? NULL : &t;
		eo.fd = -1;
		eo.host = host;
		eo.port = port;
		eo.retry_s = retry_s;
		eo.secret = have_secret ? secret : NULL;
		eo.tenant = (uint32_t)tenant;
		eo.gamma = (int)gamma;
		eo.window = cfg_proto_caps(eo.proto)->windowed ? (int)window : 1;
		eo.wan = &wan;
		eo.seed = (uint64_t)seed;
		eo.prompts = all;
		eo.prompt_n = np;
		eo.out_n = (int)tokens;
		eo.requests = (int)requests;
		eo.think_s = dist_constant(think_s);
		eo.stop_s = duration_s;
		eo.start_s = dist_constant(0);
		eo.t0_s = rt_now_s();
		eo.text = stdout;
		log = edge_run(&eo, &e);
		print_json_file(log, log_path, &e);
		free(all);
	}
	free(prompts);
	json_decref(wj);
	cfg_wan_release(&wan);
	tok_release(&t);
	llama_release(&m);
	if (!log)
		return too_long ? CLI_BAD_INPUT : failed(&e);
	json_decref(log);
	return CLI_OK;
}
