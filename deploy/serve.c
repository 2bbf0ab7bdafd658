/* serve.c: the server's event loop.
 *
 * pfd[0] is the listening socket and pfd[1 + i] client slot i (fd -1 when
 * free); slot i of the verifier is the same tenant. One iteration runs at a
 * time, like a GPU's: messages that come during it wait in the kernel's
 * socket buffers and are read before the next batch is formed. */
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

#include "rt.h"
#include "verifier.h"
#include "wire.h"
#include "mem.h"

struct client {
	struct wire_conn c;
	struct serve_client p;
};

struct server {
	const struct serve_opts *o;
	struct verifier v;
	struct pollfd *pfd;   /* (1 + max_clients) */
	struct client *cl;    /* (max_clients) */
	long clients, gone, errors, requests_done, iterations;
	long batch_tokens, prefill_tokens, verdicts;
	double busy_s, last_done_s;
	struct wire_msg *msg; /* owned scratch: a message read or sent */
};

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
static void send_error(struct server *s, struct wire_conn *c, const char *text)
{
	*s->msg = (struct wire_msg){ .type = WIRE_ERROR };
	snprintf(s->msg->text, sizeof(s->msg->text), "%.200s", text);
	wire_conn_send(c, s->msg, &(struct err){ 0 });
}

/* Tells the client what it did wrong, then disconnects it. */
static void reject(struct server *s, int i, const char *what)
{
	send_error(s, &s->cl[i].c, what);
	s->errors++;
	drop(s, i, what);
}

static void accept_client(struct server *s)
{
	int fd = accept(s->pfd[0].fd, NULL, NULL), one = 1;
	struct wire_conn full;
	char text[64];

	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (int i = 0; i < s->o->max_clients; i++)
		if (s->pfd[1 + i].fd < 0) {
			wire_conn_init(&s->cl[i].c, fd);
			s->cl[i].p = (struct serve_client){ 0 };
			s->pfd[1 + i] = (struct pollfd){ .fd = fd, .events = POLLIN };
			s->clients++;
			return;
		}
	/* full: a short answer, then goodbye */
	wire_conn_init(&full, fd);
	snprintf(text, sizeof(text), "server full (%d clients)",
		 s->o->max_clients);
	send_error(s, &full, text);
	wire_conn_release(&full);
}

int serve_handle(struct verifier *v, struct serve_client *c, int slot,
		 const struct wire_msg *m, double now_s, struct err *e)
{
	if (!c->hello && m->type != WIRE_HELLO)
		return err_set(e, "message type %d before hello", m->type);
	switch (m->type) {
	case WIRE_HELLO:
		if (c->hello)
			return err_set(e, "a second hello");
		c->hello = true;
		c->tenant = m->tenant;
		return 0;
	case WIRE_PROMPT:
		return verifier_prompt(v, slot, m->request, m->tok, (int)m->n,
				       m->out_tokens > INT32_MAX ? -1 :
				       (int)m->out_tokens, now_s, e);
	case WIRE_BLOCK:
		if (m->pos > (uint32_t)v->m->c.seq_len)
			return err_set(e, "block at position %u", m->pos);
		return verifier_block(v, slot, m->request, m->epoch, (int)m->pos,
				      m->tok, (int)m->n, now_s, e) < 0 ? -1 : 0;
	case WIRE_DONE:
		return verifier_done(v, slot, m->request, e);
	case WIRE_VERDICT:
	case WIRE_ERROR:
		break;
	}
	return err_set(e, "message type %d is the cloud's", m->type);
}

/* Handles one message of slot i; -1 with e's message on a protocol error. */
static int handle(struct server *s, int i, const struct wire_msg *m,
		  struct err *e)
{
	double now = rt_now_s() - s->o->t0_s;

	if (serve_handle(&s->v, &s->cl[i].p, i, m, now, e) < 0)
		return -1;
	if (m->type == WIRE_DONE) {
		s->requests_done++;
		s->last_done_s = now;
	}
	return 0;
}

static void read_client(struct server *s, int i)
{
	struct client *c = &s->cl[i];
	struct wire_msg *m = s->msg;
	struct err e = { 0 };
	int r;

	if (wire_conn_read(&c->c, &e) < 0) {
		/* still handle what came before the end */
		while (wire_conn_next(&c->c, m, &e) == 1 &&
		       handle(s, i, m, &e) == 0)
			;
		drop(s, i, "disconnected");
		return;
	}
	while ((r = wire_conn_next(&c->c, m, &e)) == 1)
		if (handle(s, i, m, &e) < 0)
			break;
	if (r != 0) {
		char what[256];

		snprintf(what, sizeof(what), "tenant %u: %.200s", c->p.tenant,
			 e.msg);
		reject(s, i, what);
	}
}

static void iterate(struct server *s)
{
	struct viter it;
	struct wire_msg *m = s->msg;
	double t = rt_now_s();

	verifier_iterate(&s->v, &it);
	s->busy_s += rt_now_s() - t;
	s->iterations++;
	s->batch_tokens += it.tokens;
	s->prefill_tokens += it.prefill_tokens;
	s->verdicts += it.nverdicts;
	for (int j = 0; j < it.nverdicts; j++) {
		const struct vverdict *v = &s->v.out[j];
		struct err e = { 0 };

		*m = (struct wire_msg){ .type = WIRE_VERDICT, .request = v->request,
					.epoch = v->epoch, .verified = v->verified,
					.accepted = v->accepted, .k = v->k,
					.token = v->token };
		if (wire_conn_send(&s->cl[v->slot].c, m, &e) < 0)
			drop(s, v->slot, e.msg);
	}
}

json_t *serve_run(const struct serve_opts *o, struct err *e)
{
	struct server s = { .o = o, .msg = xmalloc(sizeof(struct wire_msg)) };
	int n = 1 + o->max_clients;
	json_t *stats;

	verifier_init(&s.v, o->m, o->policy, o->budget, o->chunk, o->window_s,
		      o->max_clients);
	s.pfd = xcalloc((size_t)n, sizeof(*s.pfd));
	s.cl = xcalloc((size_t)o->max_clients, sizeof(*s.cl));
	s.pfd[0] = (struct pollfd){ .fd = o->listen_fd, .events = POLLIN };
	for (int i = 1; i < n; i++)
		s.pfd[i].fd = -1;
	rt_signals_catch();
	while (!rt_signal && !(o->exit_after && s.gone >= o->exit_after)) {
		double wait;
		bool ready = verifier_ready(&s.v, rt_now_s() - o->t0_s, &wait);

		for (int i = 1; i < n; i++)
			s.pfd[i].events = (short)(POLLIN |
				(s.pfd[i].fd >= 0 && s.cl[i - 1].c.out_len ?
				 POLLOUT : 0));
		if (wire_poll(s.pfd, (unsigned long)n, ready || o->spin ? 0 :
			      wait == INFINITY ? -1 : wait) < 0) {
			err_set(e, "poll: %s", strerror(errno));
			break;
		}
		if (s.pfd[0].revents & POLLIN)
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
		if (verifier_ready(&s.v, rt_now_s() - o->t0_s, &wait))
			iterate(&s);
	}
	rt_signals_restore();
	stats = json_pack("{s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}",
			  "iterations", (json_int_t)s.iterations,
			  "busy_s", s.busy_s,
			  "batch_tokens", (json_int_t)s.batch_tokens,
			  "prefill_tokens", (json_int_t)s.prefill_tokens,
			  "verdicts", (json_int_t)s.verdicts,
			  "stale_blocks_dropped", (json_int_t)s.v.stale_dropped,
			  "segment_blocks_discarded", (json_int_t)s.v.discarded,
			  "clients", (json_int_t)s.clients,
			  "protocol_errors", (json_int_t)s.errors,
			  "requests_done", (json_int_t)s.requests_done,
			  "last_done_s", s.last_done_s);
	for (int i = 0; i < o->max_clients; i++)
		if (s.pfd[1 + i].fd >= 0)
			wire_conn_release(&s.cl[i].c);
	close(o->listen_fd);
	free(s.pfd);
	free(s.cl);
	free(s.msg);
	verifier_release(&s.v);
	return stats;
}
