/* serve.c: the server's event loop.
 *
 * pfd[0] is the listening socket (fd -1 once draining) and pfd[1 + i]
 * client slot i (fd -1 when free); slot i of the verifier is the same
 * tenant. One iteration runs at a time, like a GPU's: messages that come
 * during it wait in the kernel's socket buffers and are read before the
 * next batch is formed. Each client's times (connected, last heard from or
 * answered, first byte of a frame not yet whole) drive the limits, checked
 * at most every LIMITS_EVERY_S.
 *
 * A serve_proc is what the program holds around the loop: the target and
 * its tokenizer, the secret and the log, which its o borrows, so it is set
 * up in place and released only after serve_run has returned. */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kern.h"
#include "mload.h"
#include "pool.h"
#include "rt.h"
#include "sketch.h"
#include "verifier.h"
#include "wire.h"
#include "mem.h"

#define LIMITS_EVERY_S 0.05 /* how often the time limits are checked */
#define WAKE_S 0.25         /* the longest sleep while clients have limits */

struct client {
	struct wire_conn c;
	struct serve_client p;
	uint32_t addr;        /* the peer's IPv4 address */
	double since_s, last_s, partial_s; /* partial_s < 0: no frame begun */
};

struct server {
	const struct serve_opts *o;
	struct verifier v;
	struct pollfd *pfd;   /* (1 + max_clients) */
	struct client *cl;    /* (max_clients) */
	long clients, gone, errors, refused, full, timeouts, draining_refused;
	long requests_done, iterations, batch_tokens, prefill_tokens, verdicts;
	long accepted, drained;
	double busy_s, last_done_s, signal_s, limits_s;
	size_t max_buffered;
	/* verdict latency: lat_log since the last log line, lat before it
	 * (merged in at each line and at the end) */
	struct sketch lat, lat_log;
	long logged_verdicts, logged_accepted; /* the counters at that line */
	double log_s;         /* the last log line's time */
	struct wire_msg *msg; /* owned scratch: a message read or sent */
	json_t *iters;        /* owned, when o->log_iterations: a row an
				 iteration, [tokens, sequences, context
				 summed, seconds, logits rows] */
};

static double now_s(const struct server *s)
{
	return rt_now_s() - s->o->t0_s;
}

int serve_listen(const char *host, int *port, struct err *e)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd, one = 1;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return err_set(e, "'%s': not an IPv4 address", host);
	a.sin_port = htons((uint16_t)*port);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return err_set(e, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		err_set(e, "%s:%d: %s", host, *port, strerror(errno));
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static void drop(struct server *s, int i, const char *why)
{
	struct client *c = &s->cl[i];

	if (s->o->verbose)
		fprintf(stderr, "serve: tenant %u (slot %d) %s\n", c->p.tenant, i,
			why);
	verifier_drop(&s->v, i);
	wire_conn_release(&c->c);
	s->pfd[1 + i].fd = -1;
	s->gone++;
}

/* Sends an ERROR saying text on c (best effort: it is closed next). */
static void send_error(struct server *s, struct wire_conn *c, bool retry,
		       const char *text)
{
	*s->msg = (struct wire_msg){ .type = WIRE_ERROR, .retry = retry };
	snprintf(s->msg->text, sizeof(s->msg->text), "%.200s", text);
	wire_conn_send(c, s->msg, &(struct err){ 0 });
}

/* Tells client i why it is cut off, then disconnects it; *count is the
 * counter of that kind of parting. */
static void reject(struct server *s, int i, bool retry, long *count,
		   const char *what)
{
	send_error(s, &s->cl[i].c, retry, what);
	(*count)++;
	drop(s, i, what);
}

/* Answers a connection that gets no slot, and closes it. */
static void turn_away(struct server *s, int fd, bool retry, const char *text)
{
	struct wire_conn c;

	wire_conn_init(&c, fd);
	send_error(s, &c, retry, text);
	wire_conn_release(&c);
}

static void accept_client(struct server *s)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd = accept(s->pfd[0].fd, (struct sockaddr *)&a, &alen), one = 1;
	int free_slot = -1, same = 0;
	char text[96];

	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (int i = 0; i < s->o->max_clients; i++) {
		if (s->pfd[1 + i].fd < 0) {
			if (free_slot < 0)
				free_slot = i;
		} else if (s->cl[i].addr == a.sin_addr.s_addr) {
			same++;
		}
	}
	if (free_slot < 0) {
		snprintf(text, sizeof(text), "server full (%d clients)",
			 s->o->max_clients);
		s->full++;
		turn_away(s, fd, true, text);
		return;
	}
	if (s->o->max_per_addr && same >= s->o->max_per_addr) {
		snprintf(text, sizeof(text), "%d connections from this address "
			 "already (--max-per-addr)", same);
		s->refused++;
		turn_away(s, fd, true, text);
		return;
	}
	struct client *c = &s->cl[free_slot];

	wire_conn_init(&c->c, fd);
	c->p = (struct serve_client){ 0 };
	c->addr = a.sin_addr.s_addr;
	c->since_s = c->last_s = now_s(s);
	c->partial_s = -1;
	s->pfd[1 + free_slot] = (struct pollfd){ .fd = fd, .events = POLLIN };
	s->clients++;
}

int serve_handle(struct verifier *v, struct serve_client *c, int slot,
		 const struct wire_msg *m, const struct serve_opts *o,
		 double now_s, struct err *e)
{
	if (!c->hello && m->type != WIRE_HELLO)
		return err_set(e, "message type %d before hello", m->type);
	switch (m->type) {
	case WIRE_HELLO:
		if (c->hello)
			return err_set(e, "a second hello");
		if (o && o->secret && !wire_secret_equal(m->secret, o->secret)) {
			err_set(e, "hello with the wrong secret");
			return -2;
		}
		if (o && o->tokenizer && m->tokenizer &&
		    m->tokenizer != o->tokenizer) {
			err_set(e, "the edge's draft has another tokenizer than "
				"this server's target (the edge's fingerprint "
				"%08x, the target's %08x: serve --model and edge "
				"--draft must share one)", m->tokenizer,
				o->tokenizer);
			return -2;
		}
		c->hello = true;
		c->tenant = m->tenant;
		return 0;
	case WIRE_PROMPT:
	case WIRE_START:
		if (m->out_tokens > (uint32_t)v->m->c.seq_len)
			return err_set(e, "request of %u prompt + %u output "
				       "tokens: the model's context is %d", m->n,
				       m->out_tokens, v->m->c.seq_len);
		return verifier_prompt(v, slot, m->request, m->tok, (int)m->n,
				       (int)m->out_tokens, now_s, e) < 0 ||
		       (m->type == WIRE_START &&
			verifier_decode(v, slot, m->request, e) < 0) ? -1 : 0;
	case WIRE_READY:
		if (m->pos > (uint32_t)v->m->c.seq_len)
			return err_set(e, "ready at position %u", m->pos);
		return verifier_handover(v, slot, m->request, (int)m->pos, e);
	case WIRE_BACK:
		if (m->pos > (uint32_t)v->m->c.seq_len)
			return err_set(e, "hand-back at position %u", m->pos);
		return verifier_back(v, slot, m->request, (int)m->pos, e);
	case WIRE_BLOCK:
		if (m->pos > (uint32_t)v->m->c.seq_len)
			return err_set(e, "block at position %u", m->pos);
		return verifier_block(v, slot, m->request, m->epoch, (int)m->pos,
				      m->tok, (int)m->n, now_s, e) < 0 ? -1 : 0;
	case WIRE_DONE:
		return verifier_done(v, slot, m->request, e);
	case WIRE_PING: /* the caller answers */
		return 0;
	case WIRE_VERDICT:
	case WIRE_ERROR:
	case WIRE_PONG:
	case WIRE_TOKEN:
		break;
	}
	return err_set(e, "message type %d is the cloud's", m->type);
}

/* Whether the server drains; starts the drain when the signal has come. */
static bool draining(struct server *s)
{
	if (s->signal_s >= 0 || !rt_signal_count)
		return s->signal_s >= 0;
	s->signal_s = now_s(s);
	if (s->pfd[0].fd >= 0) /* new connections are refused */
		close(s->pfd[0].fd);
	s->pfd[0].fd = -1;
	if (s->o->verbose)
		fprintf(stderr, "serve: signal %d: draining %ld blocks\n",
			(int)rt_signal, verifier_queued(&s->v));
	return true;
}

/* Handles one message of slot i: 0, or -1 when the client was cut off. */
static int handle(struct server *s, int i, const struct wire_msg *m)
{
	struct client *c = &s->cl[i];
	double now = now_s(s);
	struct err e = { "" };
	char what[256];
	int r;

	if (draining(s) && m->type != WIRE_DONE) {
		/* no new work: the client hears why when the drain ends */
		s->draining_refused++;
		return 0;
	}
	r = serve_handle(&s->v, &c->p, i, m, s->o, now, &e);
	if (r < 0) {
		snprintf(what, sizeof(what), "tenant %u: %.200s", c->p.tenant,
			 e.msg);
		reject(s, i, false, r == -2 ? &s->refused : &s->errors, what);
		return -1;
	}
	if (m->type == WIRE_DONE) {
		s->requests_done++;
		s->last_done_s = now;
	}
	if (m->type == WIRE_PING &&
	    wire_conn_send(&c->c, &(struct wire_msg){ .type = WIRE_PONG,
			   .request = m->request }, &e) < 0) {
		drop(s, i, e.msg);
		return -1;
	}
	return 0;
}

static void read_client(struct server *s, int i)
{
	struct client *c = &s->cl[i];
	struct wire_msg *m = s->msg;
	struct err e = { "" };
	int got = wire_conn_read(&c->c, &e), r;
	char what[256];

	if (got > 0)
		c->last_s = now_s(s);
	while ((r = wire_conn_next(&c->c, m, &e)) == 1)
		if (handle(s, i, m) < 0)
			return;
	if (r < 0) {
		snprintf(what, sizeof(what), "tenant %u: %.200s", c->p.tenant,
			 e.msg);
		reject(s, i, false, &s->errors, what);
		return;
	}
	if (got < 0) { /* what came before the end was handled */
		drop(s, i, "disconnected");
		return;
	}
	if (!c->c.in_len)
		c->partial_s = -1;
	else if (c->partial_s < 0)
		c->partial_s = c->last_s;
}

/* Cuts off the clients that overstay a limit. */
static void check_limits(struct server *s)
{
	const struct serve_opts *o = s->o;
	double now = now_s(s);
	char what[96];

	if (now - s->limits_s < LIMITS_EVERY_S)
		return;
	s->limits_s = now;
	for (int i = 0; i < o->max_clients; i++) {
		struct client *c = &s->cl[i];

		if (s->pfd[1 + i].fd < 0)
			continue;
		bool idle = false;

		what[0] = 0;
		if (o->hello_s && !c->p.hello && now - c->since_s > o->hello_s)
			snprintf(what, sizeof(what), "no hello within %g s",
				 o->hello_s);
		else if (o->frame_s && c->partial_s >= 0 &&
			 now - c->partial_s > o->frame_s)
			snprintf(what, sizeof(what), "a frame not whole within "
				 "%g s", o->frame_s);
		else if ((idle = o->idle_s && !verifier_owes(&s->v, i) &&
				 now - c->last_s > o->idle_s))
			snprintf(what, sizeof(what), "idle for %g s", o->idle_s);
		if (what[0]) /* only the idle may come back */
			reject(s, i, idle, &s->timeouts, what);
	}
}

static void iterate(struct server *s)
{
	struct viter it;
	struct wire_msg *m = s->msg;
	double t = rt_now_s(), now;

	verifier_iterate(&s->v, &it);
	if (!it.seqs) /* every sequence preempted: nothing ran */
		return;
	t = rt_now_s() - t;
	s->busy_s += t;
	if (s->iters)
		json_array_append_new(s->iters, json_pack("[i,i,I,f,i]", it.tokens,
			it.seqs, (json_int_t)it.ctx_sum, t, it.rows));
	now = now_s(s);
	s->iterations++;
	s->batch_tokens += it.tokens;
	s->prefill_tokens += it.prefill_tokens;
	s->verdicts += it.nverdicts;
	if (s->signal_s >= 0)
		s->drained += it.nverdicts;
	for (int j = 0; j < it.nverdicts; j++) {
		const struct vverdict *v = &s->v.out[j];
		struct client *c = &s->cl[v->slot];
		struct err e = { 0 };

		sk_add(&s->lat_log, now - v->queued_s);
		s->accepted += v->drafts_accepted;
		*m = (struct wire_msg){ .type = WIRE_VERDICT, .request = v->request,
					.epoch = v->epoch, .verified = v->verified,
					.accepted = v->accepted, .k = v->k,
					.token = v->token };
		c->last_s = now;
		if (wire_conn_send(&c->c, m, &e) < 0)
			drop(s, v->slot, e.msg);
	}
	for (int j = 0; j < it.ntokens; j++) { /* the target's own (a handover
						  start, a hand-back) */
		const struct vtoken *k = &s->v.tokens[j];
		struct client *c = &s->cl[k->slot];
		struct err e = { 0 };

		*m = (struct wire_msg){ .type = WIRE_TOKEN, .request = k->request,
					.pos = (uint32_t)k->pos,
					.token = (uint32_t)k->token, .last = k->last };
		c->last_s = now;
		if (wire_conn_send(&c->c, m, &e) < 0)
			drop(s, k->slot, e.msg);
	}
}

/* Bytes held in every connection's buffers. */
static size_t buffered(const struct server *s)
{
	size_t n = 0;

	for (int i = 0; i < s->o->max_clients; i++)
		if (s->pfd[1 + i].fd >= 0)
			n += s->cl[i].c.in_cap + s->cl[i].c.out_cap;
	return n;
}

/* One line of counters since the last: JSON, for a soak's table. */
static void log_line(struct server *s, double now)
{
	double span = now - s->log_s;

	fprintf(s->o->log, SERVE_LOG_HEAD " %.3f, \"connected\": %ld, \"verdicts_per_s\": "
		"%.1f, \"drafts_accepted_per_s\": %.1f, \"verdict_p50_s\": %.6f, "
		"\"verdict_p99_s\": %.6f, \"rss_kb\": %ld, \"buffered_bytes\": "
		"%zu, \"verdicts\": %ld, \"requests_done\": %ld}\n", now,
		s->clients - s->gone, (s->verdicts - s->logged_verdicts) / span,
		(s->accepted - s->logged_accepted) / span,
		sk_quantile(&s->lat_log, 0.5), sk_quantile(&s->lat_log, 0.99),
		rt_rss_kb(), buffered(s), s->verdicts, s->requests_done);
	fflush(s->o->log);
	sk_merge(&s->lat, &s->lat_log);
	sk_reset(&s->lat_log);
	s->logged_verdicts = s->verdicts;
	s->logged_accepted = s->accepted;
	s->log_s = now;
}

/* Whether the loop goes on. */
static bool serving(struct server *s)
{
	const struct serve_opts *o = s->o;

	if (o->exit_after && s->gone >= o->exit_after)
		return false;
	if (!draining(s))
		return true;
	if (rt_signal_count > 1 || now_s(s) - s->signal_s >= o->drain_s)
		return false;
	if (verifier_queued(&s->v))
		return true;
	for (int i = 0; i < o->max_clients; i++) /* verdicts still unsent */
		if (s->pfd[1 + i].fd >= 0 && s->cl[i].c.out_len)
			return true;
	return false;
}

/* Whether an iteration should start now; a drain does not wait for the
 * batching window. */
static bool work_ready(const struct server *s, double *wait)
{
	return verifier_ready(&s->v, now_s(s), wait) ||
	       (s->signal_s >= 0 && verifier_queued(&s->v));
}

/* How long the loop may sleep in poll (< 0: until something comes). */
static double sleep_s(const struct server *s, bool ready, double wait)
{
	const struct serve_opts *o = s->o;

	if (ready || o->spin)
		return 0;
	if (s->clients > s->gone &&
	    (o->hello_s || o->frame_s || o->idle_s || s->signal_s >= 0))
		wait = fmin(wait, WAKE_S);
	if (o->log)
		wait = fmin(wait, fmax(0, s->log_s + o->log_every_s - now_s(s)));
	return wait == INFINITY ? -1 : wait;
}

json_t *serve_run(const struct serve_opts *o, struct err *e)
{
	struct server s = { .o = o, .msg = xmalloc(sizeof(struct wire_msg)),
			    .signal_s = -1,
			    .iters = o->log_iterations ? json_array() : NULL };
	int n = 1 + o->max_clients;
	long rss, max_rss;
	json_t *stats;

	verifier_init(&s.v, o->m, o->budget, o->chunk,
		      cfg_sched_hold_s(o->policy, o->window_s), o->max_clients);
	if (o->kv_blocks > 0)
		verifier_kv(&s.v, o->kv_blocks, o->block_tokens, o->watermark,
			    o->max_seqs);
	sk_init(&s.lat);
	sk_init(&s.lat_log);
	s.pfd = xcalloc((size_t)n, sizeof(*s.pfd));
	s.cl = xcalloc((size_t)o->max_clients, sizeof(*s.cl));
	s.pfd[0] = (struct pollfd){ .fd = o->listen_fd, .events = POLLIN };
	for (int i = 1; i < n; i++)
		s.pfd[i].fd = -1;
	s.log_s = now_s(&s);
	while (serving(&s)) {
		double wait;
		bool ready = work_ready(&s, &wait);

		for (int i = 1; i < n; i++)
			s.pfd[i].events = (short)(POLLIN |
				(s.pfd[i].fd >= 0 && s.cl[i - 1].c.out_len ?
				 POLLOUT : 0));
		if (wire_poll(s.pfd, (unsigned long)n, sleep_s(&s, ready, wait)) < 0) {
			err_set(e, "poll: %s", strerror(errno));
			break;
		}
		if (s.pfd[0].fd >= 0 && s.pfd[0].revents & POLLIN)
			accept_client(&s);
		for (int i = 0; i < o->max_clients; i++) {
			short ev = s.pfd[1 + i].revents;

			if (s.pfd[1 + i].fd < 0 || !ev)
				continue;
			if (ev & POLLOUT &&
			    wire_conn_flush(&s.cl[i].c, &(struct err){ 0 }) < 0) {
				drop(&s, i, "gone");
				continue;
			}
			if (ev & (POLLIN | POLLHUP | POLLERR))
				read_client(&s, i);
		}
		check_limits(&s);
		if (work_ready(&s, &wait))
			iterate(&s);
		size_t b = buffered(&s);

		if (b > s.max_buffered)
			s.max_buffered = b;
		if (o->log && now_s(&s) - s.log_s >= o->log_every_s)
			log_line(&s, now_s(&s));
	}
	sk_merge(&s.lat, &s.lat_log);
	if (s.signal_s >= 0) {
		char why[96];

		snprintf(why, sizeof(why), "server shutting down (signal %d): "
			 "come back later", (int)rt_signal);
		for (int i = 0; i < o->max_clients; i++)
			if (s.pfd[1 + i].fd >= 0)
				send_error(&s, &s.cl[i].c, true, why);
	}
	rss = rt_rss_kb();
	max_rss = rt_max_rss_kb(rss);
	stats = json_pack("{s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
			  " s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:I, s:I, s:o,"
			  " s:I, s:I}",
			  "iterations", (json_int_t)s.iterations,
			  "busy_s", s.busy_s,
			  "batch_tokens", (json_int_t)s.batch_tokens,
			  "prefill_tokens", (json_int_t)s.prefill_tokens,
			  "verdicts", (json_int_t)s.verdicts,
			  "drafts_accepted", (json_int_t)s.accepted,
			  "stale_blocks_dropped", (json_int_t)s.v.stale_dropped,
			  "segment_blocks_discarded", (json_int_t)s.v.discarded,
			  "clients", (json_int_t)s.clients,
			  "protocol_errors", (json_int_t)s.errors,
			  "refused", (json_int_t)s.refused,
			  "full", (json_int_t)s.full,
			  "timeouts", (json_int_t)s.timeouts,
			  "refused_draining", (json_int_t)s.draining_refused,
			  "requests_done", (json_int_t)s.requests_done,
			  "last_done_s", s.last_done_s,
			  "verdict_p50_s", sk_quantile(&s.lat, 0.5),
			  "verdict_p99_s", sk_quantile(&s.lat, 0.99),
			  "max_buffered_bytes", (json_int_t)s.max_buffered,
			  "rss_kb", (json_int_t)rss,
			  "max_rss_kb", (json_int_t)max_rss,
			  "signal_s", s.signal_s < 0 ? json_null() :
				      json_real(s.signal_s),
			  "drained_verdicts", (json_int_t)s.drained,
			  "unanswered_blocks", (json_int_t)verifier_queued(&s.v));
	json_object_set_new(stats, "preemptions", json_integer(s.v.preemptions));
	json_object_set_new(stats, "kv_blocks", json_integer(s.v.kv.blocks));
	json_object_set_new(stats, "kv_peak_blocks", json_integer(s.v.kv.peak));
	if (s.iters)
		json_object_set_new(stats, "iteration_log", s.iters);
	for (int i = 0; i < o->max_clients; i++)
		if (s.pfd[1 + i].fd >= 0)
			wire_conn_release(&s.cl[i].c);
	if (s.pfd[0].fd >= 0)
		close(s.pfd[0].fd);
	free(s.pfd);
	free(s.cl);
	free(s.msg);
	sk_release(&s.lat);
	sk_release(&s.lat_log);
	verifier_release(&s.v);
	return stats;
}

int serve_secret(const char *file, uint8_t s[WIRE_SECRET_BYTES],
		 struct err *e)
{
	const char *env = getenv("HYBRIDSPEC_TOKEN");

	if (file)
		return wire_secret_load(file, s, e) < 0 ? -1 : 1;
	if (env && *env) /* set but empty: none */
		return wire_secret_parse("$HYBRIDSPEC_TOKEN", env, s, e) < 0 ? -1 : 1;
	return 0;
}

/* p's secret and log from s (nothing else held yet). */
static int proc_secret_log(struct serve_proc *p, const struct serve_setup *s,
			   struct err *e)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s->host, &a) != 1)
		return err_set(e, "--listen %s: not an IPv4 address (four numbers "
			       "as 127.0.0.1 or 0.0.0.0)", s->host);
	switch (serve_secret(s->token_file, p->secret, e)) {
	case -1:
		return -1;
	case 1:
		p->o.secret = p->secret;
		break;
	default:
		if (ntohl(a.s_addr) >> 24 != 127) /* not the loopback */
			return err_set(e, "--listen %s: a server reachable from "
				       "other machines needs a shared secret "
				       "(--token-file FILE or $HYBRIDSPEC_TOKEN)",
				       s->host);
	}
	if (s->log_path && !(p->log = fopen(s->log_path, "w")))
		return err_set(e, "--log %s: %s", s->log_path, strerror(errno));
	p->o.log = p->log;
	return 0;
}

int serve_proc_init(struct serve_proc *p, const struct serve_setup *s,
		    struct err *e)
{
	struct quant q;

	*p = (struct serve_proc){ .o = s->o, .port = s->port };
	p->o.secret = NULL;
	p->o.log = NULL;
	if (proc_secret_log(p, s, e) < 0)
		return -1;
	if (mload_spec(s->model, "f32", &p->m, &p->t, &q, e) < 0) {
		if (p->log)
			fclose(p->log);
		return -1;
	}
	p->o.listen_fd = serve_listen(s->host, &p->port, e);
	if (p->o.listen_fd < 0) {
		llama_release(&p->m);
		tok_release(&p->t);
		if (p->log)
			fclose(p->log);
		return -1;
	}
	if (s->threads > 1)
		p->m.pool = kern_pool_new(s->threads);
	p->o.m = &p->m;
	p->o.tokenizer = tok_fingerprint(&p->t);
	p->o.t0_s = rt_now_s();
	return 0;
}

void serve_proc_release(struct serve_proc *p)
{
	if (p->log)
		fclose(p->log);
	if (p->m.pool)
		kpool_free(p->m.pool);
	llama_release(&p->m);
	tok_release(&p->t);
}
