/* cli_validate.c: "hybridspec validate": the real deployment on loopback
 * against the simulator, point by point.
 *
 * For a sweep file (docs/sweep.md) whose points use the sync or async
 * protocol: first the deployment's own costs are measured on this machine
 * (the draft's step and prefill times, the verifier's batch times, the
 * draft/target greedy agreement along the target's own continuations of
 * the workload's prompts) and written as calibration profiles; then each
 * point runs for real (one serve process, one edge process per tenant,
 * loopback TCP, the WAN emulated in the edges) and in the simulator on
 * those profiles, and the two are printed side by side. Every edge's
 * output is compared with the target's own greedy continuation. */
#define _GNU_SOURCE /* realpath, sched_setaffinity */
#include "cli.h"

#include "calib.h"
#include "edge.h"
#include "jx.h"
#include "outdir.h"
#include "prof.h"
#include "prov.h"
#include "report.h"
#include "serve.h"
#include "sim.h"
#include "spec.h"
#include "sweep.h"
#include "verifier.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VAL_PROMPTS 32     /* distinct prompts of the workload */
#define VAL_MAX_GAMMA 8    /* E[A] measured for gamma 1 .. 8 */
#define VAL_ROUNDS 3       /* rounds over the verify grid */

static const char validate_help[] =
	"usage: hybridspec validate SWEEP.json [-o DIR] [--target NAME[:Q]]\n"
	"                           [--draft NAME[:Q]] [--text FILE] [--json]\n"
	"                           [--quick] [--quiet] [--timeout-s X]\n"
	"\n"
	"Runs every point of the sweep twice: as a real deployment on this\n"
	"machine (hybridspec serve with the target model, default\n"
	"tinystories656K in f32, and one edge process per tenant drafting with\n"
	"the draft model, default tinystories656K in w4a16, over loopback TCP\n"
	"with the WAN emulated),\n"
	"and in the simulator with profiles measured first on\n"
	"the same models and machine. Prints ITL, alpha, tokens/s and the cloud's\n"
	"busy fraction of both with relative errors, and whether every edge's\n"
	"output equals the target's own greedy output. Prompts are slices of\n"
	"the text (default the TinyStories excerpt in ../shared/data).\n"
	"Points must use sync or async, closed-loop workloads with constant\n"
	"prompt and output lengths, one replica, continuous or window batching.\n"
	"Results: DIR (default results/runs/validate-NAME): validate.json,\n"
	"validate.csv, calib/ (the profiles), points/<i>/ (config, server and\n"
	"edge logs, simulated summary). Exit 1 when an output was not lossless.\n"
	"--quick: fewer timing repetitions in the calibration (for tests).\n"
	"--timeout-s: kill a point's processes after X seconds (default 600).\n"
	"Documented in docs/deploy.md.\n";

/* The CPUs: with two or more, the verifier (the cloud's GPU) gets the
 * last one to itself and the edge devices share the others, so that the
 * two sides do not take each other's time; calibration times each side on
 * its own CPUs. */
struct cpus {
	cpu_set_t all, edge, server;
	bool split;
};

static void cpus_init(struct cpus *c)
{
	int last = -1;

	CPU_ZERO(&c->all);
	sched_getaffinity(0, sizeof(c->all), &c->all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &c->all))
			last = i;
	c->edge = c->all;
	CPU_ZERO(&c->server);
	c->split = CPU_COUNT(&c->all) >= 2;
	if (c->split) {
		CPU_CLR(last, &c->edge);
		CPU_SET(last, &c->server);
	} else {
		c->server = c->all;
	}
}

static void pin(const cpu_set_t *s)
{
	sched_setaffinity(0, sizeof(*s), s);
}

struct val {
	struct cpus cpu;
	struct calib_model tm, dm;  /* target and draft */
	int *text, ntext;           /* the text's tokens */
	int np, nout;               /* prompt and output tokens (largest) */
	int *prompts;               /* (VAL_PROMPTS x np) */
	int *greedy;                /* (VAL_PROMPTS x nout): target's own */
	unsigned char *bits;        /* (VAL_PROMPTS x nout): draft agrees
				       with the target at that output position */
	double stoch[VAL_PROMPTS];  /* alpha_stochastic along each */
	json_t *mean_accepted;      /* E[A] per gamma, measured */
	bool quiet;
	bool quick;                 /* fewer timing repetitions */
	struct prof_edge edge;      /* the draft's measured profile */
};

/* ---- what a point needs, checked ---- */

static int dist_int(const struct dist *d, const char *what, int g, int *out,
		    struct err *e)
{
	if (d->kind != DIST_CONSTANT)
		return err_set(e, "/tenants/%d/workload/%s: the deployment needs "
			       "a constant", g, what);
	*out = (int)lround(d->a);
	return 0;
}

static int check_point(const struct cfg *c, int *np, int *nout, struct err *e)
{
	if (c->cloud.replicas != 1 || (c->cloud.policy != SCHED_CONTINUOUS &&
				       c->cloud.policy != SCHED_WINDOW))
		return err_set(e, "/cloud: the deployment has one replica with "
			       "continuous or window batching");
	for (size_t g = 0; g < c->n_groups; g++) {
		const struct cfg_group *G = &c->groups[g];
		int p = 0, o = 0;

		if (G->proto.kind != PROTO_SYNC && G->proto.kind != PROTO_ASYNC)
			return err_set(e, "/tenants/%zu/protocol: the deployment "
				       "runs sync or async", g);
		if (G->workload.arrival != ARRIVAL_CLOSED)
			return err_set(e, "/tenants/%zu/workload/arrival: the "
				       "deployment runs closed loops", g);
		if (dist_int(&G->workload.prompt_tokens, "prompt_tokens", (int)g,
			     &p, e) < 0 ||
		    dist_int(&G->workload.output_tokens, "output_tokens", (int)g,
			     &o, e) < 0)
			return -1;
		if (g && (p != *np || o != *nout))
			return err_set(e, "/tenants/%zu/workload: every group needs "
				       "the same prompt and output lengths", g);
		*np = p;
		*nout = o;
	}
	return 0;
}

/* ---- calibration ---- */

/* Prompts spread over the text, and the target's greedy continuations. */
static int make_prompts(struct val *v, struct err *e)
{
	const struct llama *m = &v->tm.m;
	struct llama_state st;
	float *logits = xmalloc(sizeof(float) * (size_t)v->np * m->c.vocab);

	if (v->np + v->nout > m->c.seq_len || v->ntext < v->np + 1) {
		free(logits);
		return err_set(e, "%d prompt + %d output tokens: the target's "
			       "context is %d, the text has %d tokens", v->np,
			       v->nout, m->c.seq_len, v->ntext);
	}
	v->prompts = xmalloc(sizeof(int) * VAL_PROMPTS * (size_t)v->np);
	v->greedy = xmalloc(sizeof(int) * VAL_PROMPTS * (size_t)v->nout);
	llama_state_init(&st, &m->c, v->np);
	for (int p = 0; p < VAL_PROMPTS; p++) {
		int at = (int)((long)(v->ntext - v->np) * p / VAL_PROMPTS);
		int *pr = v->prompts + (size_t)p * v->np;
		int *out = v->greedy + (size_t)p * v->nout;

		memcpy(pr, v->text + at, sizeof(int) * (size_t)v->np);
		/* the reference: one token at a time, as generation does */
		llama_forward(m, &st, pr, v->np, 0, logits);
		out[0] = spec_argmax(logits + (size_t)(v->np - 1) * m->c.vocab,
				     m->c.vocab);
		for (int i = 1; i < v->nout; i++) {
			llama_forward(m, &st, &out[i - 1], 1, v->np + i - 1, logits);
			out[i] = spec_argmax(logits, m->c.vocab);
		}
	}
	llama_state_release(&st);
	free(logits);
	return 0;
}

/* What acceptance profiles need, measured once: along each prompt's
 * target continuation the draft's greedy agreement (teacher-forced) and
 * its alpha_stochastic; E[A] per gamma from real greedy speculative
 * decoding of every prompt. */
static void measure_acceptance(struct val *v)
{
	int n = v->np + v->nout, *seq = xmalloc(sizeof(int) * (size_t)n);
	int *o = xmalloc(sizeof(int) * (size_t)v->nout);

	v->bits = xmalloc((size_t)VAL_PROMPTS * (size_t)v->nout);
	for (int p = 0; p < VAL_PROMPTS; p++) {
		struct spec_accept a;

		memcpy(seq, v->prompts + (size_t)p * v->np, sizeof(int) * (size_t)v->np);
		memcpy(seq + v->np, v->greedy + (size_t)p * v->nout,
		       sizeof(int) * (size_t)v->nout);
		spec_teacher_forced(&v->tm.m, &v->dm.m, seq, n, &a);
		/* bits[i] judges the prediction of token i + 1 */
		memcpy(v->bits + (size_t)p * v->nout, a.bits + v->np - 1,
		       (size_t)v->nout);
		v->stoch[p] = a.alpha_stochastic;
		free(a.bits);
	}
	v->mean_accepted = json_object();
	for (int g = 1; g <= VAL_MAX_GAMMA; g++) {
		struct spec_stats ss = { 0 };
		char key[16];

		for (int p = 0; p < VAL_PROMPTS; p++)
			spec_decode_greedy(&v->tm.m, &v->dm.m,
					   v->prompts + (size_t)p * v->np, v->np,
					   v->nout, g, o, &ss);
		snprintf(key, sizeof(key), "%d", g);
		json_object_set_new(v->mean_accepted, key, json_real(ss.full_blocks ?
			(double)ss.full_tokens / (double)ss.full_blocks : 1));
	}
	free(seq);
	free(o);
}

/* The prompt of a tenant's request: the same in the deployment and in the
 * point's acceptance profile. */
static int prompt_index(int tenant, int requests, int r)
{
	return (tenant * requests + r) % VAL_PROMPTS;
}

/* The point's acceptance profile, dir/accept.json and dir/accept.bits:
 * the bits of exactly the prompts its requests use, one line a request. */
static int accept_profile(struct val *v, const struct cfg *c, const char *dir,
			  const json_t *prov, struct err *e)
{
	char path[4200];
	long pos = 0, agree = 0;
	double stoch = 0;
	json_t *doc;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%.4000s/accept.bits", dir);
	if (!(f = fopen(path, "w")))
		return err_set(e, "cannot write '%s': %s", path, strerror(errno));
	fprintf(f, "# greedy agreement of draft and target along the target's "
		"continuation of each request's prompt\n");
	for (size_t g = 0, idx = 0; g < c->n_groups; g++)
		for (long long k = 0; k < c->groups[g].count; k++, idx++)
			for (int r = 0; r < (int)c->groups[g].workload.requests; r++) {
				int p = prompt_index((int)idx,
					(int)c->groups[g].workload.requests, r);

				for (int i = 0; i < v->nout; i++) {
					int b = v->bits[(size_t)p * v->nout + i];

					fputc('0' + b, f);
					agree += b;
				}
				fputc('\n', f);
				pos += v->nout;
				stoch += v->stoch[p];
			}
	if (fclose(f) != 0)
		return err_set(e, "cannot write '%s'", path);
	doc = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:f,s:O,"
			"s:s,s:O}",
			"kind", "acceptance", "target", v->tm.name,
			"draft", v->dm.name, "target_quant", v->tm.quant,
			"draft_quant", v->dm.quant, "text", "the point's prompts",
			"tokens", (json_int_t)pos, "ppl", 0.0, "ppl_draft", 0.0,
			"alpha_greedy", (double)agree / (double)pos,
			"alpha_stochastic", stoch * (double)v->nout / (double)pos,
			"temperature", 0.0, "mean_accepted_per_gamma",
			v->mean_accepted, "bits", "accept.bits", "provenance", prov);
	snprintf(path, sizeof(path), "%.4000s/accept.json", dir);
	rc = jx_save(path, doc, e);
	json_decref(doc);
	return rc;
}

/* The verifier's iteration time over a grid of batch tokens x context, as
 * verifier_iterate runs it: at each point, slots prefilled to the context
 * get one block each, in segments of gamma + 1 tokens, so that the batch
 * holds the point's tokens. The drafts are text tokens, so most are
 * rejected and a slot's context grows by a token or two a repetition.
 * The grid is timed in VAL_ROUNDS rounds, each point a burst of
 * repetitions whose first only warms the caches (the verifier of a server
 * runs on warm caches: nothing else runs on its CPU); a burst of noise on a
 * shared machine then touches one round of a point, not all of it. A
 * point's time is the median of its repetitions, then made non-decreasing
 * in tokens (a bigger batch never takes less time: a median that does is
 * noise). */
struct vgrid {
	const int *tok, *ctx;  /* (nt), (nc) */
	int nt, nc;
	double *med;           /* (nt x nc) seconds */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void queue_blocks(struct verifier *v, int tokens, int gamma,
			 const int *text)
{
	struct err e;
	int left = tokens;

	for (int i = 0; i < v->slots && left > 1; i++) {
		const struct vreq *q = &v->t[i];
		int base = q->len - q->kv_len;
		int n = left - base < gamma ? left - base : gamma;

		verifier_block(v, i, 0, q->epoch, q->len, text + q->len + 1, n, 0,
			       &e);
		left -= base + n;
	}
}

static void verify_grid(const struct llama *m, const int *text, int gamma,
			int reps, struct vgrid *g)
{
	int np = g->nt * g->nc, seg = gamma + 1;
	int burst = (reps + VAL_ROUNDS - 1) / VAL_ROUNDS;
	struct verifier *v = xcalloc((size_t)np, sizeof(*v));
	double *s = xmalloc(sizeof(double) * (size_t)np * (size_t)reps), w;
	struct viter it;
	struct err e;

	for (int p = 0; p < np; p++) {
		int tokens = g->tok[p / g->nc], ctx = g->ctx[p % g->nc];
		int slots = (tokens + seg - 1) / seg;

		verifier_init(&v[p], m, SCHED_CONTINUOUS, tokens + 1,
			      m->c.seq_len, 0, slots);
		for (int i = 0; i < slots; i++)
			verifier_prompt(&v[p], i, 0, text + i, ctx,
					m->c.seq_len - ctx, 0, &e);
		while (verifier_ready(&v[p], 0, &w)) /* the prefills */
			verifier_iterate(&v[p], &it);
	}
	for (int r = 0; r < reps; r += burst)
		for (int p = 0; p < np; p++)
			for (int b = -1; b < burst && r + b < reps; b++) {
				double t0;

				queue_blocks(&v[p], g->tok[p / g->nc], gamma, text);
				t0 = cli_now_s();
				verifier_iterate(&v[p], &it);
				if (b >= 0)
					s[(size_t)p * reps + r + b] = cli_now_s() - t0;
			}
	for (int p = 0; p < np; p++) {
		qsort(s + (size_t)p * reps, (size_t)reps, sizeof(double),
		      cmp_double);
		g->med[p] = s[(size_t)p * reps + reps / 2];
		if (p >= g->nc && g->med[p] < g->med[p - g->nc])
			g->med[p] = g->med[p - g->nc];
		verifier_release(&v[p]);
	}
	free(s);
	free(v);
}

/* The grid's medians as a calib_time_fn. */
static double grid_time(void *arg, int tokens, int ctx)
{
	const struct vgrid *g = arg;
	int i = 0, j = 0;

	while (g->tok[i] != tokens)
		i++;
	while (g->ctx[j] != ctx)
		j++;
	return g->med[i * g->nc + j];
}

/* Measures the edge and verify profiles into dir (edge.json,
 * verify.json) and what the points' acceptance profiles need. budget: the
 * largest batch a point uses. */
static int calibrate(struct val *v, const char *dir, int gamma, int budget,
		     const json_t *prov, struct err *e)
{
	static const int ctx_all[] = { 8, 32, 64, 128, 256, 512, 1024, 0 };
	static const int pre_all[] = { 4, 8, 16, 32, 64, 128, 0 };
	int seq_len = v->tm.m.c.seq_len, ctx[8], pre[8], tok[16], nc = 0, np = 0,
	    nt = 0;
	int reps = v->quick ? 5 : 31;
	struct calib_cpu_opts co = { .ctx = ctx, .prefill = pre, .reps = reps,
				     .min_s = v->quick ? 0.002 : 0.02,
				     .stream_bytes = (v->quick ? 16u : 64u) << 20,
				     .progress = !v->quiet };
	struct vgrid vg = { .tok = tok, .ctx = ctx };
	json_t *edge, *verify, *none;
	char path[4096];
	int rc;

	/* contexts that leave room for the repetitions' growth */
	for (int i = 0; ctx_all[i]; i++)
		if (ctx_all[i] + 2 * reps * (gamma + 1) <= seq_len)
			ctx[nc++] = ctx_all[i];
	for (int i = 0; pre_all[i]; i++)
		if (pre_all[i] < seq_len)
			pre[np++] = pre_all[i];
	ctx[nc] = pre[np] = 0;
	for (int t = 2; t < 2 * budget && nt < 15; t *= 2)
		tok[nt++] = t < budget ? t : budget;
	tok[nt] = 0;
	if (nc < 2)
		return err_set(e, "the target's context (%d) is too short to "
			       "calibrate gamma %d", seq_len, gamma);
	if (!v->quiet)
		fprintf(stderr, "validate: calibrating the draft, the verifier "
			"and the acceptance on this machine\n");
	pin(&v->cpu.edge);
	edge = calib_cpu(&v->dm, &co, prov, &none);
	pin(&v->cpu.server);
	json_object_set_new(edge, "device", json_string("this machine (validate)"));
	snprintf(path, sizeof(path), "%.4000s/edge.json", dir);
	rc = jx_save(path, edge, e);
	json_decref(edge);
	if (rc < 0 || prof_edge_load(path, &v->edge, e) < 0)
		return -1;
	vg.nt = nt;
	vg.nc = nc;
	vg.med = xmalloc(sizeof(double) * (size_t)(nt * nc));
	verify_grid(&v->tm.m, v->text, gamma, reps, &vg);
	verify = calib_verify_table("cpu-1t", v->tm.name, seq_len, tok, ctx,
				    grid_time, &vg, "verifier_iterate timed on "
				    "this CPU in segments of gamma + 1 (median "
				    "of 3 rounds of warm bursts, made "
				    "non-decreasing in tokens)", prov, !v->quiet);
	free(vg.med);
	pin(&v->cpu.all);
	snprintf(path, sizeof(path), "%.4000s/verify.json", dir);
	rc = jx_save(path, verify, e);
	json_decref(verify);
	if (rc == 0)
		measure_acceptance(v);
	return rc;
}

/* ---- one point ---- */

struct side {
	double itl_s, tokens_per_s, alpha, busy, ttft_s;
};

struct point {
	struct side real, sim;
	double draft_step_s;       /* real: mean wall time of a draft step */
	long requests, mismatched; /* requests, those not lossless */
	long errors;               /* protocol errors the server saw */
};

static int dial_loopback(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* The body of an edge process: tenant idx of group g. */
static int edge_child(struct val *v, const struct cfg *c, size_t g, int idx,
		      int port, double t0, const char *pdir)
{
	const struct cfg_group *G = &c->groups[g];
	int R = (int)G->workload.requests;
	int *pr = xmalloc(sizeof(int) * (size_t)R * (size_t)v->np);
	char path[4200];
	struct edge_opts eo = {
		.m = &v->dm.m, .tk = &v->tm.t, .tenant = (uint32_t)idx,
		.proto = G->proto.kind, .gamma = G->proto.gamma,
		.window = G->proto.kind == PROTO_SYNC ? 1 : G->proto.window,
		.wan = &G->wan, .seed = c->seed, .prompts = pr,
		.prompt_n = v->np, .out_n = v->nout, .requests = R,
		.think_s = G->workload.think_s, .start_s = G->workload.start_s,
		.t0_s = t0,
	};
	struct err e;
	json_t *log;

	for (int r = 0; r < R; r++)
		memcpy(pr + (size_t)r * v->np,
		       v->prompts + (size_t)((idx * R + r) % VAL_PROMPTS) * v->np,
		       sizeof(int) * (size_t)v->np);
	snprintf(path, sizeof(path), "%.4000s/edge-%d.txt", pdir, idx);
	eo.text = fopen(path, "w");
	eo.fd = dial_loopback(port);
	if (eo.fd < 0) {
		fprintf(stderr, "validate: edge %d: cannot connect: %s\n", idx,
			strerror(errno));
		return 1;
	}
	log = edge_run(&eo, &e);
	if (eo.text)
		fclose(eo.text);
	if (!log) {
		fprintf(stderr, "validate: edge %d: %s\n", idx, e.msg);
		return 1;
	}
	snprintf(path, sizeof(path), "%.4000s/edge-%d.json", pdir, idx);
	if (jx_save(path, log, &e) < 0) {
		fprintf(stderr, "validate: %s\n", e.msg);
		return 1;
	}
	return 0;
}

static int server_child(struct val *v, const struct cfg *c, int lfd,
			int clients, double t0, const char *pdir)
{
	struct serve_opts so = {
		.m = &v->tm.m, .listen_fd = lfd, .policy = c->cloud.policy,
		.budget = (int)c->cloud.max_batch_tokens,
		.chunk = (int)c->cloud.prefill_chunk_tokens,
		.window_s = c->cloud.window_s, .max_clients = clients,
		.exit_after = clients, .t0_s = t0, .spin = v->cpu.split,
	};
	char path[4200];
	struct err e;
	json_t *st = serve_run(&so, &e);

	if (!st) {
		fprintf(stderr, "validate: serve: %s\n", e.msg);
		return 1;
	}
	snprintf(path, sizeof(path), "%.4000s/server.json", pdir);
	return jx_save(path, st, &e) < 0 ? 1 : 0;
}

/* Forks the server and the edges, waits for them (killing them all after
 * timeout_s), and reads their logs into p->real. */
static int deploy_point(struct val *v, const struct cfg *c, const char *pdir,
			double timeout_s, struct point *p, struct err *e)
{
	int port = 0, lfd = serve_listen("127.0.0.1", &port, e), n = 0, bad = 0;
	int clients = 0;
	pid_t *pid;
	double t0, deadline, tokens = 0, span = 0, gaps = 0, end = 0, ttft = 0;
	double judged = 0, accepted = 0, draft_s = 0, drafted = 0;
	char path[4200];
	json_t *st;

	if (lfd < 0)
		return -1;
	for (size_t g = 0; g < c->n_groups; g++)
		clients += (int)c->groups[g].count;
	pid = xcalloc((size_t)clients + 1, sizeof(pid_t));
	fflush(NULL);
	t0 = cli_now_s() + 0.3 + 0.005 * clients; /* all processes up by then */
	if ((pid[n++] = fork()) == 0) {
		pin(&v->cpu.server);
		_exit(server_child(v, c, lfd, clients, t0, pdir));
	}
	close(lfd);
	for (size_t g = 0, idx = 0; g < c->n_groups; g++)
		for (long long k = 0; k < c->groups[g].count; k++, idx++)
			if ((pid[n++] = fork()) == 0) {
				pin(&v->cpu.edge);
				_exit(edge_child(v, c, g, (int)idx, port, t0,
						 pdir));
			}
	deadline = cli_now_s() + timeout_s;
	for (int left = n; left > 0;) {
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG);

		if (w > 0) {
			left--;
			bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
		} else if (cli_now_s() > deadline) {
			for (int i = 0; i < n; i++)
				kill(pid[i], SIGKILL);
			while (wait(NULL) > 0)
				;
			free(pid);
			return err_set(e, "%s: still running after %.0f s: killed",
				       pdir, timeout_s);
		} else {
			nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
		}
	}
	free(pid);
	if (bad)
		return err_set(e, "%s: %d of the deployment's processes failed "
			       "(their messages are above)", pdir, bad);
	snprintf(path, sizeof(path), "%.4000s/server.json", pdir);
	if (!(st = jx_load(path, e)))
		return -1;
	p->errors = (long)json_integer_value(json_object_get(st, "protocol_errors"));
	for (int idx = 0; idx < clients; idx++) {
		json_t *log, *reqs, *rq;
		size_t i;

		snprintf(path, sizeof(path), "%.4000s/edge-%d.json", pdir, idx);
		if (!(log = jx_load(path, e))) {
			json_decref(st);
			return -1;
		}
		judged += (double)json_integer_value(json_object_get(log, "judged"));
		accepted += (double)json_integer_value(json_object_get(log, "accepted"));
		draft_s += json_number_value(json_object_get(log, "draft_s"));
		drafted += (double)json_integer_value(json_object_get(log, "drafted"));
		reqs = json_object_get(log, "requests");
		json_array_foreach(reqs, i, rq) {
			json_t *cm = json_object_get(rq, "commits");
			json_t *tk = json_object_get(rq, "tokens");
			size_t nc = json_array_size(cm);
			int R = (int)json_array_size(reqs);
			const int *want = v->greedy +
				(size_t)prompt_index(idx, R, (int)i) * v->nout;
			double first = json_number_value(json_array_get(
				json_array_get(cm, 0), 0));
			double last = json_number_value(json_array_get(
				json_array_get(cm, nc - 1), 0));

			tokens += v->nout;
			span += last - first;
			gaps += v->nout - 1;
			ttft += first - json_number_value(json_object_get(rq,
							"arrive_s"));
			end = fmax(end, json_number_value(json_object_get(rq,
							"done_arrive_s")));
			p->requests++;
			for (int t = 0; t < v->nout; t++)
				if (json_integer_value(json_array_get(tk, (size_t)t)) !=
				    want[t]) {
					p->mismatched++;
					break;
				}
		}
		json_decref(log);
	}
	p->real = (struct side){
		.itl_s = gaps > 0 ? span / gaps : 0,
		.tokens_per_s = end > 0 ? tokens / end : 0,
		.alpha = judged > 0 ? accepted / judged : 0,
		.busy = end > 0 ? json_number_value(json_object_get(st, "busy_s")) /
				  end : 0,
		.ttft_s = p->requests ? ttft / (double)p->requests : 0,
	};
	p->draft_step_s = drafted > 0 ? draft_s / drafted : 0;
	json_decref(st);
	return 0;
}

static double num_at(const json_t *doc, const char *ptr)
{
	char buf[JX_PTR_MAX], *tok, *save = NULL;
	const json_t *v = doc;

	snprintf(buf, sizeof(buf), "%s", ptr);
	for (tok = strtok_r(buf, "/", &save); tok && v;
	     tok = strtok_r(NULL, "/", &save))
		v = json_object_get(v, tok);
	return json_number_value(v);
}

/* The simulator on the same config, averaged over the sweep's seeds. */
static int simulate_point(const struct sweep *sw, size_t point,
			  char **extra, size_t n_extra, const char *pdir,
			  struct point *p, struct err *e)
{
	struct side sum = { 0 };

	for (size_t k = 0; k < sw->n_seeds; k++) {
		size_t n;
		char **sets = sweep_sets(sw, point, sw->seeds[k], &n);
		const char **all = xmalloc(sizeof(char *) * (n + n_extra));
		struct cfg c;
		struct sim s;
		json_t *sum_doc = NULL;
		int rc;

		for (size_t i = 0; i < n; i++)
			all[i] = sets[i];
		for (size_t i = 0; i < n_extra; i++)
			all[n + i] = extra[i];
		rc = cfg_load(&c, sw->base, all, n + n_extra, e);
		free(all);
		sweep_sets_free(sets, n);
		if (rc < 0)
			return -1;
		rc = sim_init(&s, &c, (struct sim_opts){ 0 }, e);
		if (rc == 0 && (rc = sim_run(&s)) == 0) {
			sum_doc = rep_summary(&s);
			sum.itl_s += num_at(sum_doc, "/all/itl_s/mean");
			sum.tokens_per_s += num_at(sum_doc, "/all/tokens_per_s");
			sum.alpha += num_at(sum_doc, "/all/alpha");
			sum.busy += num_at(sum_doc, "/cloud/busy_fraction");
			sum.ttft_s += num_at(sum_doc, "/all/ttft_s/mean");
			if (k == 0) {
				char path[4200];

				snprintf(path, sizeof(path), "%.4000s/sim-summary.json",
					 pdir);
				rc = jx_save(path, sum_doc, e);
			}
			json_decref(sum_doc);
		}
		sim_release(&s);
		cfg_release(&c);
		if (rc < 0)
			return -1;
	}
	p->sim = (struct side){ sum.itl_s / sw->n_seeds,
				sum.tokens_per_s / sw->n_seeds,
				sum.alpha / sw->n_seeds, sum.busy / sw->n_seeds,
				sum.ttft_s / sw->n_seeds };
	return 0;
}

/* ---- the command ---- */

/* mkdir -p; -1 with e's message. */
static int make_dir(const char *path, struct err *e)
{
	char buf[4400];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = 0;
			if (mkdir(buf, 0777) < 0 && errno != EEXIST)
				return err_set(e, "cannot make '%s': %s", buf,
					       strerror(errno));
			*p = c;
			if (!c)
				return 0;
		}
	}
}

static double rel(double sim, double real)
{
	return real != 0 ? (sim - real) / real : 0;
}

/* "/tenants/0/count=4 /protocol/kind=sync" style label of a point. */
static void point_label(const struct sweep *sw, size_t point, char *buf,
			size_t n)
{
	size_t at = 0;

	buf[0] = 0;
	for (size_t a = 0; a < sw->n_axes && at < n; a++) {
		char *v = json_dumps(json_array_get(sw->axes[a].values,
						    sweep_value_index(sw, point, a)),
				     JSON_ENCODE_ANY | JSON_COMPACT |
				     JSON_REAL_PRECISION(6));
		const char *ptr = sw->axes[a].ptr, *key = strrchr(ptr, '/');

		/* a distribution's parameter is named with its key */
		if (key && key > ptr &&
		    (!strcmp(key, "/mean") || !strcmp(key, "/sd") ||
		     !strcmp(key, "/value")))
			while (--key > ptr && *key != '/')
				;
		at += (size_t)snprintf(buf + at, n - at, "%s%s=%s", a ? " " : "",
				       key ? key + 1 : ptr, v);
		free(v);
	}
}

static json_t *side_json(const struct side *s)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f}", "itl_s", s->itl_s,
			 "tokens_per_s", s->tokens_per_s, "alpha", s->alpha,
			 "busy_fraction", s->busy, "ttft_s", s->ttft_s);
}

static void print_row(FILE *f, const char *label, const struct point *p)
{
	fprintf(f, "%-34s %7.2f %7.2f %+6.1f%%  %7.1f %7.1f %+6.1f%%  %5.3f %5.3f"
		"  %5.3f %5.3f  %s\n", label, 1e3 * p->real.itl_s,
		1e3 * p->sim.itl_s, 100 * rel(p->sim.itl_s, p->real.itl_s),
		p->real.tokens_per_s, p->sim.tokens_per_s,
		100 * rel(p->sim.tokens_per_s, p->real.tokens_per_s),
		p->real.alpha, p->sim.alpha, p->real.busy, p->sim.busy,
		p->mismatched ? "NO" : "yes");
}

/* Overrides that point the simulator at the measured profiles. Caller
 * frees each and the array. */
static char **profile_sets(const char *cdir, const char *pdir,
			   const struct cfg *c, const char *model, size_t *n)
{
	char **s = xcalloc(2 * c->n_groups + 2, sizeof(char *));
	size_t k = 0;
	char buf[8400];

	for (size_t g = 0; g < c->n_groups; g++) {
		snprintf(buf, sizeof(buf), "/tenants/%zu/device={\"profile\": "
			 "\"%s/edge.json\"}", g, cdir);
		s[k++] = xstrdup(buf);
		snprintf(buf, sizeof(buf), "/tenants/%zu/acceptance={\"profile\": "
			 "\"%s/accept.json\"}", g, pdir);
		s[k++] = xstrdup(buf);
	}
	snprintf(buf, sizeof(buf), "/cloud/model=\"%s\"", model);
	s[k++] = xstrdup(buf);
	snprintf(buf, sizeof(buf), "/cloud/gpu/table=\"%s/verify.json\"", cdir);
	s[k++] = xstrdup(buf);
	*n = k;
	return s;
}

static void free_sets(char **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

/* Text with every occurrence of from replaced by to. Caller frees. */
static char *replace_all(const char *text, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), n = 0;
	const char *p;
	char *out, *q;

	for (p = text; (p = strstr(p, from)); p += nf)
		n++;
	out = q = xmalloc(strlen(text) + n * (nt > nf ? nt - nf : 0) + 1);
	for (p = text; *p;) {
		if (!strncmp(p, from, nf)) {
			memcpy(q, to, nt);
			q += nt;
			p += nf;
		} else {
			*q++ = *p++;
		}
	}
	*q = 0;
	return out;
}

int cli_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "target", required_argument, NULL, 'T' },
		{ "draft", required_argument, NULL, 'D' },
		{ "text", required_argument, NULL, 't' },
		{ "timeout-s", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "quick", no_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL, *target = "tinystories656K",
		   *draft = "tinystories656K:w4a16", *text = NULL;
	char textbuf[4096], outbuf[4096], tmp_abs[4096], cdir[4200],
	     out_abs[4200];
	bool json = false;
	double timeout_s = 600, step_prof;
	struct val v = { 0 };
	struct sweep sw;
	struct od o = { 0 };
	struct err e;
	json_t *rows = NULL, *prov, *doc;
	FILE *csv = NULL;
	int ch, rc = CLI_FAILED, gamma = 1, budget = 2, np = 0, nout = 0;
	long lossy = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'T': target = optarg; break;
		case 'D': draft = optarg; break;
		case 't': text = optarg; break;
		case 'j': json = true; break;
		case 'q': v.quiet = true; break;
		case 'Q': v.quick = true; break;
		case 'x':
			if (cli_double("--timeout-s", optarg, 1, &timeout_s))
				return CLI_BAD_INPUT;
			break;
		case 'h':
			fputs(validate_help, stdout);
			return CLI_OK;
		default:
			fputs(validate_help, stderr);
			return CLI_BAD_INPUT;
		}
	}
	if (optind != argc - 1) {
		fputs(validate_help, stderr);
		return CLI_BAD_INPUT;
	}
	if (sweep_load(&sw, argv[optind], &e) < 0)
		return cli_fail("%s", e.msg);
	/* every point must be one the deployment can run */
	for (size_t pt = 0; pt < sw.n_points; pt++) {
		size_t n;
		char **sets = sweep_sets(&sw, pt, -1, &n);
		struct cfg c;
		int r = cfg_load(&c, sw.base, (const char *const *)sets, n, &e);

		sweep_sets_free(sets, n);
		if (r == 0) {
			r = check_point(&c, &np, &nout, &e);
			if (r < 0)
				err_prefix(&e, "%s: point %zu", sw.file, pt);
			for (size_t g = 0; g < c.n_groups; g++) {
				if (c.groups[g].proto.gamma > gamma)
					gamma = c.groups[g].proto.gamma;
			}
			if (c.cloud.max_batch_tokens > budget)
				budget = (int)c.cloud.max_batch_tokens;
			if (v.np && (np != v.np || nout != v.nout))
				r = err_set(&e, "%s: every point needs the same "
					    "prompt and output lengths", sw.file);
			v.np = np;
			v.nout = nout;
			cfg_release(&c);
		}
		if (r < 0) {
			sweep_release(&sw);
			return cli_fail("%s", e.msg);
		}
	}
	if (!text) {
		snprintf(textbuf, sizeof(textbuf), "%.4000s/TinyStories-valid-excerpt.txt",
			 mload_data_dir() ? mload_data_dir() : "../shared/data");
		text = textbuf;
	}
	if (!out) {
		snprintf(outbuf, sizeof(outbuf), "results/runs/validate-%s", sw.name);
		out = outbuf;
	}
	{
		const char *tc = strrchr(target, ':'), *dc = strrchr(draft, ':');
		char tn[1024], dn[1024];

		snprintf(tn, sizeof(tn), "%.*s", tc ? (int)(tc - target) : 1023, target);
		snprintf(dn, sizeof(dn), "%.*s", dc ? (int)(dc - draft) : 1023, draft);
		if (calib_model_init(&v.tm, tn, NULL, tc ? tc + 1 : "f32", 1, 0,
				     &e) < 0) {
			sweep_release(&sw);
			return cli_fail("%s", e.msg);
		}
		if (calib_model_init(&v.dm, dn, NULL, dc ? dc + 1 : "w4a16", 1, 0,
				     &e) < 0) {
			calib_model_release(&v.tm);
			sweep_release(&sw);
			return cli_fail("%s", e.msg);
		}
	}
	prov = prov_new(argc, argv);
	cpus_init(&v.cpu);
	if (v.tm.m.c.vocab != v.dm.m.c.vocab) {
		err_set(&e, "target %s and draft %s have different vocabularies",
			target, draft);
		rc = CLI_BAD_INPUT;
		goto done;
	}
	if (!(v.text = tok_encode_file(&v.tm.t, text, &v.ntext, &e)) ||
	    make_prompts(&v, &e) < 0) {
		rc = CLI_BAD_INPUT;
		goto done;
	}
	if (v.ntext < v.tm.m.c.seq_len + budget) {
		err_set(&e, "%s: %d tokens, too short to calibrate (needs %d)",
			text, v.ntext, v.tm.m.c.seq_len + budget);
		rc = CLI_BAD_INPUT;
		goto done;
	}
	if (od_begin(&o, out, &e) < 0 || !realpath(o.tmp, tmp_abs))
		goto done;
	snprintf(cdir, sizeof(cdir), "%.4000s/calib", tmp_abs);
	if (make_dir(cdir, &e) < 0 ||
	    calibrate(&v, cdir, gamma, budget, prov, &e) < 0)
		goto done;
	if (out[0] == '/') {
		snprintf(out_abs, sizeof(out_abs), "%.4000s", out);
	} else {
		char cwd[4096];

		if (!getcwd(cwd, sizeof(cwd)))
			cwd[0] = 0;
		snprintf(out_abs, sizeof(out_abs), "%.2000s/%.2000s", cwd, out);
	}
	/* the profile's draft step at the mean context of a request */
	step_prof = v.edge.draft_base_s + v.edge.draft_per_ctx_s *
		    (v.np + v.nout / 2.0);
	if (!(csv = od_open(&o, "validate.csv", &e)))
		goto done;
	rows = json_array();
	fprintf(csv, "point,label,itl_real_s,itl_sim_s,itl_err,tokens_per_s_real,"
		"tokens_per_s_sim,tokens_per_s_err,alpha_real,alpha_sim,"
		"busy_real,busy_sim,ttft_real_s,ttft_sim_s,lossless,"
		"draft_step_real_s,draft_step_profile_s\n");
	if (!json)
		printf("%-34s %23s  %23s  %11s  %11s  %s\n%-34s %7s %7s %7s  %7s "
		       "%7s %7s  %5s %5s  %5s %5s\n", "point", "ITL ms",
		       "tokens/s", "alpha", "cloud busy", "lossless", "",
		       "real", "sim", "err", "real", "sim", "err", "real", "sim",
		       "real", "sim");
	for (size_t pt = 0; pt < sw.n_points; pt++) {
		size_t n, nx;
		char **sets = sweep_sets(&sw, pt, sw.seeds[0], &n), **extra;
		char pdir[4400], label[512], *resolved, *fixed;
		struct point p = { 0 };
		struct cfg c;
		int r;

		point_label(&sw, pt, label, sizeof(label));
		snprintf(pdir, sizeof(pdir), "%.4000s/points/%zu", tmp_abs, pt);
		r = cfg_load(&c, sw.base, (const char *const *)sets, n, &e);
		sweep_sets_free(sets, n);
		if (r < 0 || make_dir(pdir, &e) < 0)
			goto done;
		extra = profile_sets(cdir, pdir, &c, v.tm.name, &nx);
		if (!v.quiet)
			fprintf(stderr, "validate: point %zu of %zu: %s\n", pt + 1,
				sw.n_points, label);
		r = accept_profile(&v, &c, pdir, prov, &e);
		if (r == 0)
			r = deploy_point(&v, &c, pdir, timeout_s, &p, &e);
		cfg_release(&c);
		if (r == 0)
			r = simulate_point(&sw, pt, extra, nx, pdir, &p, &e);
		if (r == 0) {
			/* the resolved config, naming the profiles where they
			 * will be */
			sets = sweep_sets(&sw, pt, sw.seeds[0], &n);
			const char **all = xmalloc(sizeof(char *) * (n + nx));

			for (size_t i = 0; i < n; i++)
				all[i] = sets[i];
			for (size_t i = 0; i < nx; i++)
				all[n + i] = extra[i];
			r = cfg_load(&c, sw.base, all, n + nx, &e);
			free(all);
			sweep_sets_free(sets, n);
			if (r == 0) {
				char name[64];

				resolved = cfg_resolved(&c);
				fixed = replace_all(resolved, tmp_abs, out_abs);
				snprintf(name, sizeof(name), "points/%zu/config.json",
					 pt);
				r = od_write(&o, name, fixed, &e);
				free(resolved);
				free(fixed);
				cfg_release(&c);
			}
		}
		free_sets(extra, nx);
		if (r < 0)
			goto done;
		lossy += p.mismatched;
		json_array_append_new(rows, json_pack(
			"{s:I,s:s,s:o,s:o,s:{s:f,s:f,s:f},s:I,s:I,s:I,s:b,s:f,s:f}",
			"point", (json_int_t)pt, "label", label,
			"real", side_json(&p.real), "sim", side_json(&p.sim),
			"error", "itl", rel(p.sim.itl_s, p.real.itl_s),
			"tokens_per_s", rel(p.sim.tokens_per_s, p.real.tokens_per_s),
			"busy_fraction", rel(p.sim.busy, p.real.busy),
			"requests", (json_int_t)p.requests,
			"not_lossless", (json_int_t)p.mismatched,
			"protocol_errors", (json_int_t)p.errors,
			"lossless", !p.mismatched,
			"draft_step_s_real", p.draft_step_s,
			"draft_step_s_profile", step_prof));
		fprintf(csv, "%zu,\"%s\",%.6g,%.6g,%.4f,%.6g,%.6g,%.4f,%.4f,%.4f,"
			"%.4f,%.4f,%.6g,%.6g,%d,%.6g,%.6g\n", pt, label, p.real.itl_s,
			p.sim.itl_s, rel(p.sim.itl_s, p.real.itl_s),
			p.real.tokens_per_s, p.sim.tokens_per_s,
			rel(p.sim.tokens_per_s, p.real.tokens_per_s), p.real.alpha,
			p.sim.alpha, p.real.busy, p.sim.busy, p.real.ttft_s,
			p.sim.ttft_s, !p.mismatched, p.draft_step_s, step_prof);
		if (!json) {
			print_row(stdout, label, &p);
			fflush(stdout);
		}
	}
	if (fclose(csv) != 0) {
		csv = NULL;
		err_set(&e, "%s: cannot write validate.csv", out);
		goto done;
	}
	csv = NULL;
	doc = json_pack("{s:s,s:s,s:s,s:s,s:O,s:O}", "name", sw.name, "target",
			target, "draft", draft, "text", text, "points", rows,
			"provenance", prov);
	{
		char *t = jx_dumps(doc), *sr = sweep_resolved(&sw);

		rc = od_write(&o, "validate.json", t, &e) < 0 ||
		     od_write(&o, OD_MARKER, sr, &e) < 0 ? -1 : 0;
		if (json && rc == 0)
			fputs(t, stdout);
		free(t);
		free(sr);
	}
	json_decref(doc);
	if (rc < 0 || od_commit(&o, &e) < 0) {
		rc = CLI_FAILED;
		goto done;
	}
	if (!json)
		printf("results: %s%s\n", out, lossy ? "; some outputs were NOT "
		       "the target's greedy output" : "");
	rc = lossy ? CLI_FAILED : CLI_OK;
	if (lossy)
		err_set(&e, "%ld requests were not lossless", lossy);
done:
	if (rc != CLI_OK)
		fprintf(stderr, "hybridspec: %s\n", e.msg);
	if (csv)
		fclose(csv);
	od_abort(&o);
	json_decref(rows);
	json_decref(prov);
	free(v.text);
	free(v.prompts);
	free(v.greedy);
	free(v.bits);
	json_decref(v.mean_accepted);
	calib_model_release(&v.dm);
	calib_model_release(&v.tm);
	sweep_release(&sw);
	return rc;
}
