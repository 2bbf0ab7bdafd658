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

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char serve_help[] =
	"usage: hybridspec serve [--model NAME[:Q]] [--host ADDR] [--port N]\n"
	"                        [--policy continuous|window] [--max-batch-tokens N]\n"
	"                        [--prefill-chunk N] [--window-s X] [--max-clients N]\n"
	"                        [--exit-after N] [--threads N] [--stats FILE]\n"
	"                        [--spin] [--verbose]\n"
	"\n"
	"The cloud verifier: holds the target model (default tinystories656K in\n"
	"f32) and verifies the draft blocks of every connected edge in batches of\n"
	"at most N tokens (default 256), prompts prefilled in chunks (default\n"
	"64). Listens on ADDR:N (default 127.0.0.1:7070; port 0 picks one and\n"
	"prints it). --exit-after N: stop once N clients have come and gone;\n"
	"else run until SIGINT or SIGTERM. --stats FILE: the server's counters\n"
	"as JSON at exit. --spin: poll without sleeping (keeps the CPU awake, as\n"
	"a GPU server's host thread spins; give it a CPU of its own). Wire\n"
	"protocol: docs/deploy.md.\n"
	"\nexit status: 0 stopped cleanly (SIGINT, SIGTERM or --exit-after), 1 it\n"
	"failed while serving (a socket error), 2 bad usage or bad input\n";

static const char edge_help[] =
	"usage: hybridspec edge [--connect HOST:PORT] [--draft NAME[:Q]]\n"
	"                       [--protocol sync|async] [--gamma N|adaptive]\n"
	"                       [--window N]\n"
	"                       [--prompt TEXT] [--tokens N] [--requests N]\n"
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
	"commit times and counters as JSON.\n"
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

int cli_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "host", required_argument, NULL, 'H' },
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
	const char *model = "tinystories656K", *host = "127.0.0.1", *stats = NULL;
	long long port = 7070, budget = 256, chunk = 64, clients = 64, after = 0,
		  threads = 1;
	double window_s = 0.002;
	struct serve_opts so = { .policy = SCHED_CONTINUOUS, .verbose = false };
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
		case 'v': so.verbose = true; break;
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
	if (mload_spec(model, "f32", &m, &t, &q, &e) < 0)
		return cli_fail("%s", e.msg);
	p = (int)port;
	so.listen_fd = serve_listen(host, &p, &e);
	if (so.listen_fd < 0) {
		llama_release(&m);
		tok_release(&t);
		return cli_fail("%s", e.msg);
	}
	if (threads > 1)
		m.pool = kern_pool_new((int)threads);
	fprintf(stderr, "serve: %s on %s:%d, %s batches of %lld tokens\n", model,
		host, p, cfg_sched_names[so.policy],
		budget);
	so.m = &m;
	so.budget = (int)budget;
	so.chunk = (int)chunk;
	so.window_s = window_s;
	so.max_clients = (int)clients;
	so.exit_after = (int)after;
	so.t0_s = rt_now_s();
	st = serve_run(&so, &e);
	if (st)
		print_json_file(st, stats, &e);
	json_decref(st);
	if (m.pool)
		kpool_free(m.pool);
	llama_release(&m);
	tok_release(&t);
	return st ? CLI_OK : failed(&e);
}

/* wire_dial to "HOST:PORT"; -1 with e's message. */
static int dial(const char *addr, struct err *e)
{
	char host[64];
	const char *colon = strrchr(addr, ':');
	long long port;
	int fd;

	if (!colon || colon - addr >= (long)sizeof(host) ||
	    cli_long("--connect", colon + 1, 1, 65535, &port))
		return err_set(e, "--connect: expected HOST:PORT, got '%s'", addr);
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	fd = wire_dial(host, (int)port, e);
	if (fd < 0)
		err_prefix(e, "--connect");
	return fd;
}

int cli_edge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "connect", required_argument, NULL, 'c' },
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
		   *log_path = NULL;
	bool window_given = false;
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
	int ch, kind, *prompts, np, fd;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': addr = optarg; break;
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
	if (np + tokens > m.c.seq_len) {
		fd = -1;
		err_set(&e, "%d prompt + %lld tokens: the model's context is %d",
			np, tokens, m.c.seq_len);
	} else {
		fd = dial(addr, &e);
	}
	log = NULL;
	if (fd >= 0) {
		int *all = xmalloc(sizeof(int) * (size_t)np * (size_t)requests);

		for (long long r = 0; r < requests; r++)
			memcpy(all + r * np, prompts, sizeof(int) * (size_t)np);
		eo.m = &m;
		eo.tk = ids ? NULL : &t;
		eo.fd = fd;
		eo.tenant = (uint32_t)tenant;
		eo.gamma = (int)gamma;
		eo.window = cfg_proto_caps(eo.proto)->windowed ? (int)window : 1;
		eo.wan = &wan;
		eo.seed = (uint64_t)seed;
		eo.prompts = all;
		eo.prompt_n = np;
		eo.out_n = (int)tokens;
		eo.requests = (int)requests;
		eo.think_s = dist_constant(0);
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
		return failed(&e);
	json_decref(log);
	return CLI_OK;
}
