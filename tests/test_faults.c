/* test_faults.c: the real deployment under faults, each with the invariant
 * "every request either completes with exactly the target's greedy output
 * or fails with a clear error; nothing hangs; the server's buffers stay
 * bounded": the server killed (SIGKILL) or stopped (SIGTERM) mid-run and
 * started again, edges reconnecting and resuming; the server frozen
 * (SIGSTOP), the edges finding its silence; a WAN blackout with 5%
 * of the messages lost; hostile clients (wrong secret, a frame left half
 * sent, no hello, out-of-order and oversized frames, a flood of
 * connections beyond the slots) beside well-behaved edges; and the drain
 * after SIGTERM (the block queued answered, the next not taken, the
 * client told why). Each case prints one line of what it saw: docs/deploy.md's
 * fault table comes from them. */
#include "harness.h"
#include "rig.h"

#include "rt.h"
#include "edge.h"
#include "jx.h"
#include "serve.h"
#include "wire.h"
#include "mem.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define F_EDGES 3
static const uint32_t f_tenants[F_EDGES] = { 0, 1, 2 };
/* the restart's: sync, async, adaptive async, and the hand-back kinds
 * (rig.c's e_kinds 5 and 6) */
#define R_EDGES 5
static const uint32_t r_tenants[R_EDGES] = { 0, 1, 2, 5, 6 };
#define F_RETRY_S 30.0   /* edges dial again for this long */
#define F_DRAIN_S 2.0
#define F_SECRET "s3cret"

static void sleep_s(double s)
{
	nanosleep(&(struct timespec){ (time_t)s,
				      (long)((s - (double)(time_t)s) * 1e9) },
		  NULL);
}

/* The server options every case starts from. */
static struct serve_opts f_opts(int max_clients)
{
	return (struct serve_opts){ .policy = SCHED_CONTINUOUS,
				    .budget = E_BUDGET, .chunk = E_CHUNK,
				    .max_clients = max_clients,
				    .drain_s = F_DRAIN_S };
}

/* The stats a server wrote to tmp_path(name); NULL is a failure. */
static json_t *stats(const char *name)
{
	struct err e = { "" };
	json_t *st = jx_load(tmp_path(name), &e);

	CHECK_MSG(st, "%s: %s", name, e.msg);
	return st;
}

/* What the edges' logs say, after checking every output (check_edge_log). */
struct f_edges {
	long long reconnects, resumed, lost, min_reconnects, handbacks;
	double last_commit_s; /* the latest commit of any edge */
};

static struct f_edges edges_seen(const struct rig *r, const uint32_t *tenants,
				 int n)
{
	struct f_edges f = { .min_reconnects = -1 };

	for (int i = 0; i < n; i++) {
		json_t *log = check_edge_log(r, tenants[i]), *reqs, *c;
		long long rc;

		if (!log)
			continue;
		rc = stat_of(log, "reconnects");
		f.reconnects += rc;
		f.resumed += stat_of(log, "resumed_tokens");
		f.lost += stat_of(log, "lost_messages");
		f.handbacks += stat_of(log, "handbacks");
		if (f.min_reconnects < 0 || rc < f.min_reconnects)
			f.min_reconnects = rc;
		reqs = json_object_get(log, "requests");
		c = json_object_get(json_array_get(reqs, json_array_size(reqs) - 1),
				    "commits");
		c = json_array_get(c, json_array_size(c) - 1);
		if (json_real_value(json_array_get(c, 0)) > f.last_commit_s)
			f.last_commit_s = json_real_value(json_array_get(c, 0));
		json_decref(log);
	}
	return f;
}

#define R_WAN "{\"rtt_s\": 0.1}" /* sync: >= 8 round trips a request */
#define R_THINK_S 1.0             /* the second request after the restart */
#define R_STOP_AT_S 0.25          /* mid first request */
#define R_DOWN_S 0.3              /* no server for this long */

/* The server stopped by sig mid-run and started again on its port: every
 * edge reconnects, those mid-request resume from their committed tokens,
 * every output is the target's; the hand-back edges too, whose estimate
 * starts again after the reconnection. After SIGTERM the first server
 * drained and exited 0 within the bound. */
static void restart(int sig)
{
	static struct rig r;
	struct serve_opts o = f_opts(R_EDGES);
	struct f_edges f;
	double t;
	int ok, st;

	if (rig_init(&r) < 0)
		return;
	ok = rig_wan(&r, R_WAN) == 0;
	r.think_s = R_THINK_S;
	r.retry_s = F_RETRY_S;
	ok = ok && start_server_opts(&r, &o, "serve1.json") == 0;
	for (int i = 0; ok && i < R_EDGES; i++)
		ok = start_edge(&r, r_tenants[i], -1, -1) == 0;
	sleep_s(R_STOP_AT_S);
	t = rt_now_s();
	if (r.k.n)
		kill(r.k.pid[0], ok ? sig : SIGKILL);
	st = kid_wait(&r.k, 0, F_DRAIN_S + 10);
	t = rt_now_s() - t;
	if (sig == SIGTERM) {
		CHECK_MSG(st == 0, "server after SIGTERM: exit status %d", st);
		CHECK_MSG(t < F_DRAIN_S + 1, "server took %.2f s to stop", t);
	}
	sleep_s(R_DOWN_S);
	o.exit_after = R_EDGES;
	ok = ok && start_server_opts(&r, &o, "serve2.json") == 0;
	if (!ok)
		for (int i = 0; i < r.k.n; i++)
			if (r.k.pid[i])
				kill(r.k.pid[i], SIGKILL);
	if (!kids_wait(&r.k, CHILD_DEADLINE_S) || !ok) {
		rig_release(&r);
		return;
	}
	f = edges_seen(&r, r_tenants, R_EDGES);
	CHECK_MSG(f.min_reconnects >= 1, "an edge never reconnected");
	CHECK_MSG(f.resumed > 0, "no edge resumed with tokens committed");
	if (sig == SIGTERM) {
		json_t *s1 = stats("serve1.json");

		CHECK_MSG(s1 && json_is_real(json_object_get(s1, "signal_s")),
			  "serve1: no signal_s");
		CHECK_MSG(stat_of(s1, "unanswered_blocks") == 0,
			  "serve1: %lld blocks left unanswered",
			  stat_of(s1, "unanswered_blocks"));
		json_decref(s1);
	}
	printf("fault: server %s at %.2f s, back %.2f s later: %d edges x %d "
	       "requests, every output the target's; %lld reconnects, %lld "
	       "tokens resumed, %lld hand-backs; stop took %.3f s\n",
	       sig == SIGTERM ? "SIGTERM" : "SIGKILL", R_STOP_AT_S, R_DOWN_S,
	       R_EDGES, E_REQUESTS, f.reconnects, f.resumed, f.handbacks, t);
	rig_release(&r);
}

static void restart_kill(void)
{
	restart(SIGKILL);
}

static void restart_term(void)
{
	restart(SIGTERM);
}

/* Waits for the edges (r's children after the server, its first) to end,
 * then stops the server with SIGTERM, which the server's own end waits
 * for (no count of clients would: dials abandoned come and go); whether
 * every one exited 0 and ok held (a failure said where not). */
static int edges_then_server(struct rig *r, int ok)
{
	int all = 1;

	for (int i = 1; i < r->k.n; i++)
		all &= kid_wait(&r->k, i, CHILD_DEADLINE_S) == 0;
	if (r->k.n)
		kill(r->k.pid[0], SIGTERM);
	if (kids_wait(&r->k, CHILD_DEADLINE_S) && ok && all)
		return 1;
	CHECK_MSG(0, "an edge or the server failed (ok %d)", ok);
	return 0;
}

#define Z_AT_S 0.25      /* mid first request (R_WAN) */
#define Z_FOR_S 1.5      /* frozen this long */
#define Z_SILENCE_S 0.4  /* the edges' bound on the cloud's silence */
#define Z_RETRY_S 1.0    /* a cloud that never answers: give up after */

/* The server frozen (SIGSTOP) mid-run, its connections and port open but
 * silent, then woken (SIGCONT): every edge finds the silence, dials again
 * (the frozen server's backlog takes the dial, and says nothing either)
 * until it answers, and resumes; every output is the target's. */
static void frozen(void)
{
	static struct rig r;
	struct serve_opts o = f_opts(8 * R_EDGES); /* the dials abandoned */
	struct f_edges f;
	int ok;

	if (rig_init(&r) < 0)
		return;
	ok = rig_wan(&r, R_WAN) == 0;
	r.think_s = R_THINK_S;
	r.retry_s = F_RETRY_S;
	r.silence_s = Z_SILENCE_S;
	ok = ok && start_server_opts(&r, &o, "serve1.json") == 0;
	for (int i = 0; ok && i < R_EDGES; i++)
		ok = start_edge(&r, r_tenants[i], -1, -1) == 0;
	if (r.k.n) {
		sleep_s(Z_AT_S);
		kill(r.k.pid[0], SIGSTOP);
		sleep_s(Z_FOR_S);
		kill(r.k.pid[0], SIGCONT);
	}
	if (!edges_then_server(&r, ok)) {
		rig_release(&r);
		return;
	}
	f = edges_seen(&r, r_tenants, R_EDGES);
	CHECK_MSG(f.min_reconnects >= 1, "an edge never reconnected");
	CHECK_MSG(f.resumed > 0, "no edge resumed with tokens committed");
	printf("fault: server frozen at %.2f s for %.1f s, edges' silence bound "
	       "%.1f s: %d edges x %d requests, every output the target's; "
	       "%lld reconnects, %lld tokens resumed\n", Z_AT_S, Z_FOR_S,
	       Z_SILENCE_S, R_EDGES, E_REQUESTS, f.reconnects, f.resumed);
	rig_release(&r);
}

#define I_IDLE_S 0.3   /* the server cuts a client idle this long */
#define I_RETRY_S 0.5  /* shorter than the think time: no verdict owed */

/* A server that cuts idle clients, and edges that think longer than that
 * between requests: each is cut while it thinks, dials again, and runs
 * its next request; a cut with nothing owed does not spend its retry
 * bound (which had ended the edge after the second cut). */
static void idle_cut(void)
{
	static struct rig r;
	struct serve_opts o = f_opts(8 * F_EDGES);
	struct f_edges f;
	int ok;

	if (rig_init(&r) < 0)
		return;
	o.idle_s = I_IDLE_S;
	r.think_s = R_THINK_S;
	r.retry_s = I_RETRY_S;
	ok = start_server_opts(&r, &o, "serve1.json") == 0;
	for (uint32_t i = 0; ok && i < F_EDGES; i++)
		ok = start_edge(&r, i, -1, -1) == 0;
	if (!edges_then_server(&r, ok)) {
		rig_release(&r);
		return;
	}
	f = edges_seen(&r, f_tenants, F_EDGES);
	CHECK_MSG(f.min_reconnects >= 1, "an edge was never cut while it "
		  "thought");
	printf("fault: a server cutting clients idle %.1f s, edges thinking "
	       "%.1f s with a retry bound of %.1f s: %d edges x %d requests, "
	       "every output the target's; %lld reconnects\n", I_IDLE_S,
	       R_THINK_S, I_RETRY_S, F_EDGES, E_REQUESTS, f.reconnects);
	rig_release(&r);
}

#define S_RTT_S 0.6    /* each verdict's round trip */
#define S_RETRY_S 0.2  /* the edges' re-dial bound, shorter than it */

/* A connected cloud slower than the edges' re-dial bound (a WAN's round
 * trip of 0.6 s, a bound of 0.2 s) is waited for: the bound is for
 * dialling after a loss (it had cut every request at its first verdict,
 * blaming a cloud it never lost). */
static void slow_cloud(void)
{
	static struct rig r;
	struct f_edges f;
	char wan[64];
	int ok;

	if (rig_init(&r) < 0)
		return;
	snprintf(wan, sizeof(wan), "{\"rtt_s\": %g}", S_RTT_S);
	r.retry_s = S_RETRY_S;
	r.edge_dials = true;
	ok = rig_wan(&r, wan) == 0 && start_server(&r, F_EDGES, 0) == 0;
	for (uint32_t i = 0; ok && i < 2; i++)
		ok = start_edge(&r, i, -1, -1) == 0;
	if (!edges_then_server(&r, ok)) {
		rig_release(&r);
		return;
	}
	f = edges_seen(&r, f_tenants, 2);
	CHECK_MSG(f.reconnects == 0, "%lld reconnects to a cloud never lost",
		  f.reconnects);
	printf("fault: a cloud of %.1f s round trips, edges re-dialling for "
	       "%.1f s: 2 edges x %d requests, every output the target's\n",
	       S_RTT_S, S_RETRY_S, E_REQUESTS);
	rig_release(&r);
}

/* A server frozen before the edges come: the dials connect (the backlog)
 * and nothing answers; each edge gives up once the silence has lasted
 * past its retry bound, with a failure, not a hang. */
static void never_answers(void)
{
	static struct rig r;
	double t;
	int ok;

	if (rig_init(&r) < 0)
		return;
	r.retry_s = Z_RETRY_S;
	r.silence_s = Z_SILENCE_S;
	r.edge_dials = true;
	ok = start_server(&r, F_EDGES, 0) == 0;
	if (r.k.n)
		kill(r.k.pid[0], SIGSTOP);
	t = rt_now_s();
	for (uint32_t i = 0; ok && i < F_EDGES; i++)
		ok = start_edge(&r, i, -1, -1) == 0;
	for (int i = 1; i < r.k.n; i++) {
		int st = kid_wait(&r.k, i, CHILD_DEADLINE_S);

		CHECK_MSG(st > 0, "edge %d: exit status %d, where the silent "
			  "cloud is a failure", i, st);
	}
	t = rt_now_s() - t;
	/* at least two silences (one after the dial again), and a bound */
	CHECK_MSG(t > 2 * Z_SILENCE_S && t < Z_SILENCE_S + Z_RETRY_S + 5,
		  "the edges gave up after %.2f s", t);
	if (r.k.n)
		kill(r.k.pid[0], SIGKILL);
	kid_wait(&r.k, 0, CHILD_DEADLINE_S);
	printf("fault: a server that never answers: %d edges gave up after "
	       "%.2f s (silence bound %.1f s, retries %.1f s)\n", F_EDGES, t,
	       Z_SILENCE_S, Z_RETRY_S);
	rig_release(&r);
}

#define B_WAN "{\"rtt_s\": 0.01, \"loss\": 0.05, \"rto_s\": 0.05, " \
	      "\"blackout\": {\"at_s\": 0.1, \"for_s\": 2}}"

/* A blackout of 2 s early in the first request and 5% of the messages
 * lost (each costing a 50 ms timeout): every output is the target's, and
 * the run lasts past the blackout. */
static void wan_faults(void)
{
	static struct rig r;
	struct f_edges f;
	int ok;

	if (rig_init(&r) < 0)
		return;
	ok = rig_wan(&r, B_WAN) == 0 && start_server(&r, F_EDGES, F_EDGES) == 0;
	for (uint32_t i = 0; ok && i < F_EDGES; i++)
		ok = start_edge(&r, i, -1, -1) == 0;
	if (!ok && r.k.n)
		kill(r.k.pid[0], SIGKILL);
	if (kids_wait(&r.k, CHILD_DEADLINE_S) && ok) {
		f = edges_seen(&r, f_tenants, F_EDGES);
		check_server(F_EDGES, F_EDGES * E_REQUESTS, 0);
		CHECK_MSG(f.last_commit_s > 2.1, "the run ended at %.2f s, inside "
			  "the blackout", f.last_commit_s);
		CHECK_MSG(f.lost > 0, "no message lost");
		printf("fault: WAN blackout 2 s and 5%% loss: %d edges x %d "
		       "requests, every output the target's; %lld messages lost, "
		       "last commit at %.2f s\n", F_EDGES, E_REQUESTS, f.lost,
		       f.last_commit_s);
	}
	rig_release(&r);
}

#define H_SLOTS 4         /* the 2 edges, 2 for the rest */
#define H_LIMIT_S 0.5     /* hello and frame timeouts */
#define H_FLOOD 12        /* connections at once */
#define H_WAN "{\"rtt_s\": 0.05}"
#define H_THINK_S 2.0     /* the edges stay through the hostile phase */

/* A raw client that says hello with the given secret. */
static int hello(int port, const char *secret)
{
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	int fd = dial(port);

	*m = (struct wire_msg){ .type = WIRE_HELLO, .tenant = 99 };
	memcpy(m->secret, secret, strlen(secret));
	if (fd >= 0 && send_msg(fd, m) < 0) {
		close(fd);
		fd = -1;
	}
	free(m);
	return fd;
}

/* Each hostile client in turn, each told why and cut off. */
static int hostile(int port)
{
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	uint8_t frame[5] = { 0 };
	int fd, ok = 1;

	fd = hello(port, "wrong");
	ok &= fd >= 0 && expect_error(fd, "wrong secret", 0, "wrong secret");
	close(fd);
	fd = hello(port, F_SECRET); /* 3 bytes of a frame, then nothing */
	ok &= fd >= 0 && send_bytes(fd, frame, 3) == 0 &&
	      expect_error(fd, "not whole within", 0, "half a frame");
	close(fd);
	fd = dial(port);
	ok &= fd >= 0 && expect_error(fd, "no hello within", 0, "no hello");
	close(fd);
	fd = hello(port, F_SECRET);
	*m = (struct wire_msg){ .type = WIRE_BLOCK, .request = 5, .pos = E_PROMPT,
				.n = 1, .tok = { 1 } };
	ok &= fd >= 0 && send_msg(fd, m) == 0 &&
	      expect_error(fd, "not active", 0, "block before its prompt");
	close(fd);
	fd = hello(port, F_SECRET);
	wire_put32(frame, WIRE_MAX_PAYLOAD + 1);
	frame[4] = WIRE_BLOCK;
	ok &= fd >= 0 && send_bytes(fd, frame, 5) == 0 &&
	      expect_error(fd, "frame of", 0, "oversized frame");
	close(fd);
	free(m);
	return ok;
}

/* H_FLOOD connections at once: those past the free slots are told "server
 * full" (come back later), those in a slot are cut off for saying no
 * hello. Returns how many were told full, or -1. */
static int flood(struct rig *r, int *full)
{
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	struct err e = { "" };
	int fd[H_FLOOD], ok = 1;

	*full = 0;
	for (int i = 0; i < H_FLOOD; i++)
		fd[i] = dial(r->port);
	/* the late edge comes in the middle of the flood */
	r->edge_dials = true;
	ok = start_edge(r, 2, -1, -1) == 0;
	for (int i = 0; i < H_FLOOD; i++) {
		int got = fd[i] < 0 ? -1 : recv_msg(fd[i], m, &e);

		if (got == 1 && m->type == WIRE_ERROR && m->retry &&
		    strstr(m->text, "server full"))
			++*full;
		else
			CHECK_MSG(got == 1 && m->type == WIRE_ERROR && !m->retry &&
				  strstr(m->text, "no hello"), "flood %d: %d, type "
				  "%d '%s' %s", i, got, m->type, m->text, e.msg);
		ok &= got == 1 && expect_close(fd[i], "flood");
		if (fd[i] >= 0)
			close(fd[i]);
	}
	free(m);
	return ok;
}

/* Two edges with the secret run while the hostile clients and the flood
 * come, and a third comes during the flood (dialling again while the
 * server is full): the three are lossless, every hostile client is told
 * why, and the server's buffers stay within their bound. */
static void hostile_clients(void)
{
	static struct rig r;
	uint8_t secret[WIRE_SECRET_BYTES] = F_SECRET;
	struct serve_opts o = f_opts(H_SLOTS);
	struct err e = { "" };
	int ok, full = 0;
	json_t *st;

	if (rig_init(&r) < 0)
		return;
	o.secret = secret;
	o.hello_s = o.frame_s = H_LIMIT_S;
	r.secret = secret;
	r.think_s = H_THINK_S;
	r.retry_s = F_RETRY_S;
	ok = rig_wan(&r, H_WAN) == 0 && start_server_opts(&r, &o, "serve.json") == 0;
	for (uint32_t i = 0; ok && i < 2; i++)
		ok = start_edge(&r, i, -1, -1) == 0;
	ok = ok && hostile(r.port);
	ok = ok && flood(&r, &full);
	for (int i = 1; i < r.k.n; i++) /* the edges */
		CHECK_MSG(kid_wait(&r.k, i, CHILD_DEADLINE_S) == 0, "%s failed",
			  r.k.name[i]);
	if (r.k.n)
		kill(r.k.pid[0], SIGTERM);
	if (!kids_wait(&r.k, CHILD_DEADLINE_S) || !ok) {
		rig_release(&r);
		return;
	}
	edges_seen(&r, f_tenants, 3);
	st = jx_load(tmp_path("serve.json"), &e);
	CHECK_MSG(st, "%s", e.msg);
	CHECK_MSG(full >= H_FLOOD - 2, "%d of %d told the server is full", full,
		  H_FLOOD);
	CHECK_MSG(stat_of(st, "refused") == 1, "refused %lld",
		  stat_of(st, "refused"));
	CHECK_MSG(stat_of(st, "protocol_errors") == 2, "protocol_errors %lld",
		  stat_of(st, "protocol_errors"));
	CHECK_MSG(stat_of(st, "timeouts") == 2 + H_FLOOD - full, "timeouts %lld",
		  stat_of(st, "timeouts"));
	CHECK_MSG(stat_of(st, "requests_done") == 3 * E_REQUESTS,
		  "requests_done %lld", stat_of(st, "requests_done"));
	/* a slot's buffers: a frame and a read's slack in, the unsent cap
	 * out (each doubled at most once past its need) */
	CHECK_MSG(stat_of(st, "max_buffered_bytes") <=
		  H_SLOTS * 2LL * (4 + WIRE_MAX_PAYLOAD + 16384 + WIRE_MAX_OUT),
		  "buffers reached %lld bytes", stat_of(st, "max_buffered_bytes"));
	printf("fault: hostile clients (wrong secret, half a frame, no hello, "
	       "a block before its prompt, an oversized frame) and a flood of "
	       "%d connections into %d free slots: 3 edges x %d requests, every "
	       "output the target's; %d told full, %lld timeouts, buffers at "
	       "most %lld bytes, server RSS at most %lld KiB\n", H_FLOOD,
	       H_SLOTS - 2, E_REQUESTS, full, stat_of(st, "timeouts"),
	       stat_of(st, "max_buffered_bytes"), stat_of(st, "max_rss_kb"));
	json_decref(st);
	rig_release(&r);
}

#define D_OUT 6 /* the raw request's output tokens */

/* SIGTERM with a block queued (a batching window far longer than the
 * test) and the next block in the socket (sent while the server was
 * stopped, so the drain reads it): the first is answered, the second is
 * not taken, the client is told the server is shutting down (come back
 * later), and the server exits 0 at once. */
static void drain(void)
{
	static struct rig r;
	struct serve_opts o = f_opts(2);
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	struct err e = { "" };
	int ok, fd = -1, got, st;
	json_t *s;
	double t;

	if (rig_init(&r) < 0) {
		free(m);
		return;
	}
	o.policy = SCHED_WINDOW;
	o.window_s = 60;
	ok = start_server_opts(&r, &o, "serve.json") == 0 &&
	     (fd = hello(r.port, "")) >= 0;
	*m = (struct wire_msg){ .type = WIRE_PROMPT, .out_tokens = D_OUT,
				.n = E_PROMPT };
	memcpy(m->tok, r.prompts[0], sizeof(int) * E_PROMPT);
	ok = ok && send_msg(fd, m) == 0;
	*m = (struct wire_msg){ .type = WIRE_BLOCK, .pos = E_PROMPT, .n = 3 };
	memcpy(m->tok, r.want[0], sizeof(int) * 3);
	ok = ok && send_msg(fd, m) == 0;
	sleep_s(0.2); /* read and queued behind the window */
	if (r.k.n)
		kill(r.k.pid[0], ok ? SIGSTOP : SIGKILL);
	*m = (struct wire_msg){ .type = WIRE_BLOCK, .pos = E_PROMPT + 4, .n = 1,
				.tok = { r.want[0][4] } };
	ok = ok && send_msg(fd, m) == 0;
	sleep_s(0.05); /* in the server's socket buffer */
	t = rt_now_s();
	if (r.k.n) {
		kill(r.k.pid[0], ok ? SIGTERM : SIGKILL);
		kill(r.k.pid[0], SIGCONT);
	}
	got = ok ? recv_msg(fd, m, &e) : -1;
	CHECK_MSG(got == 1 && m->type == WIRE_VERDICT && m->accepted == 1 &&
		  m->token == (uint32_t)r.want[0][3], "the queued block: %d, type "
		  "%d accepted %u '%s': %s", got, m->type, m->accepted, m->text,
		  e.msg);
	ok = ok && got == 1 &&
	     expect_error(fd, "shutting down", 1, "after SIGTERM");
	if (fd >= 0)
		close(fd);
	st = r.k.n ? kid_wait(&r.k, 0, F_DRAIN_S + 10) : -1;
	t = rt_now_s() - t;
	CHECK_MSG(st == 0, "server after SIGTERM: exit status %d", st);
	if (ok && st == 0 && (s = stats("serve.json"))) {
		CHECK(stat_of(s, "drained_verdicts") == 1);
		CHECK(stat_of(s, "refused_draining") == 1);
		CHECK(stat_of(s, "unanswered_blocks") == 0);
		printf("fault: SIGTERM with a block queued and one more sent: the "
		       "first answered, the second not taken, the client told "
		       "\"shutting down\" (come back later), exit 0 %.3f s after "
		       "the signal\n", t);
		json_decref(s);
	}
	free(m);
	rig_release(&r);
}

/* The secret: a file's first line, 1 to 32 bytes, padded with zeros. */
static void secrets(void)
{
	uint8_t a[WIRE_SECRET_BYTES], b[WIRE_SECRET_BYTES];
	struct err e = { "" };

	CHECK(wire_secret_load(t_write("s", "abc\nrest\n"), a, &e) == 0);
	CHECK(wire_secret_parse("env", "abc", b, &e) == 0);
	CHECK(wire_secret_equal(a, b) && a[3] == 0 && a[31] == 0);
	CHECK(wire_secret_parse("env", "abd", b, &e) == 0 &&
	      !wire_secret_equal(a, b));
	CHECK(wire_secret_load(t_write("empty", "\n"), a, &e) < 0 &&
	      strstr(e.msg, "0 bytes"));
	CHECK(wire_secret_parse("env", "0123456789abcdef0123456789abcdefX",
				a, &e) < 0 && strstr(e.msg, "33 bytes") &&
	      strstr(e.msg, "env"));
	CHECK(wire_secret_load(tmp_path("none"), a, &e) < 0 &&
	      strstr(e.msg, "none"));
	/* a NUL byte is refused, not the secret cut at it; a line too long
	 * to read whole says more than what was read, not that much */
	{
		const char *nul = tmp_path("nul");
		FILE *f = fopen(nul, "w");
		char big[400];

		fwrite("a\0bcdefgh\n", 1, 10, f);
		fclose(f);
		CHECK_MSG(wire_secret_load(nul, a, &e) < 0 &&
			  strstr(e.msg, "a NUL byte at byte 2 of the secret"),
			  "%s", e.msg);
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		CHECK_MSG(wire_secret_load(t_write("big", big), a, &e) < 0 &&
			  strstr(e.msg, "a secret of more than 256 bytes"),
			  "%s", e.msg);
	}
	/* a folder opens and reads nothing: said so, not "0 bytes" */
	CHECK_MSG(wire_secret_load(t_tmpdir(), a, &e) < 0 &&
		  strstr(e.msg, "directory"), "%s", e.msg);
	/* $HYBRIDSPEC_TOKEN set but empty is none */
	{
		const char *was = getenv("HYBRIDSPEC_TOKEN");
		char *keep = was ? strdup(was) : NULL;

		setenv("HYBRIDSPEC_TOKEN", "", 1);
		CHECK(serve_secret(NULL, a, &e) == 0);
		if (keep)
			setenv("HYBRIDSPEC_TOKEN", keep, 1);
		else
			unsetenv("HYBRIDSPEC_TOKEN");
		free(keep);
	}
}

const struct tcase faults_tests[] = {
	{ "faults: the shared secret's file", secrets },
	{ "faults: server killed and restarted, edges resume",
	  restart_kill },
	{ "faults: server stopped by SIGTERM and restarted, edges resume",
	  restart_term },
	{ "faults: server frozen, edges find the silence and resume", frozen },
	{ "faults: a server that never answers: the edges give up", never_answers },
	{ "faults: edges cut while they think dial again and go on", idle_cut },
	{ "faults: a cloud slower than the re-dial bound is waited for",
	  slow_cloud },
	{ "faults: WAN blackout and 5% loss", wan_faults },
	{ "faults: hostile clients and a flood beside lossless edges",
	  hostile_clients },
	{ "faults: SIGTERM answers the queued block, takes no more",
	  drain },
	{ 0 },
};
