/* netem.c: the link thread and what the edge asks of it.
 *
 * mu guards the lines, stop, writing, unwritten, fail and the count of
 * changes (seen: as many as the edge had when it last looked, in
 * netem_take or netem_flushed; netem_wait returns once there are more,
 * so no change between a look and a wait is missed). The connection c is the
 * thread's alone while running (the edge touches it only attached and
 * detached, the thread stopped). The thread sleeps in poll on the socket
 * and the wake pipe, at most until the up line's oldest message arrives;
 * the edge writes a byte to the pipe when it sends, so that a message due
 * sooner than the one the thread waits for is not late. Once fail is set
 * the thread reads no more and writes no more. */
#include "netem.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"
#include "mem.h"
#include "rt.h"

static double clock_s(const struct netem *n)
{
	return rt_now_s() - n->t0_s;
}

void netem_init(struct netem *n, const struct cfg_wan *w, uint64_t seed,
		 uint32_t tenant, double t0_s)
{
	pthread_condattr_t ca;

	*n = (struct netem){ .t0_s = t0_s, .c = { .fd = -1 },
			     .wake = { -1, -1 } };
	wan_line_init(&n->up, w, true, seed, rng_stream_id("up %u", tenant));
	wan_line_init(&n->down, w, false, seed, rng_stream_id("down %u", tenant));
	pthread_mutex_init(&n->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&n->changed, &ca);
	pthread_condattr_destroy(&ca);
}

void netem_release(struct netem *n)
{
	netem_detach(n);
	wan_line_release(&n->up);
	wan_line_release(&n->down);
	pthread_cond_destroy(&n->changed);
	pthread_mutex_destroy(&n->mu);
}

/* Under mu: wakes the edge's netem_wait, something having changed. */
static void tell(struct netem *n)
{
	n->changes++;
	pthread_cond_broadcast(&n->changed);
}

/* Under mu: the connection failed (the first failure is the one kept). */
static void fail(struct netem *n, int kind)
{
	if (!n->fail)
		n->fail = kind;
	tell(n);
}

/* Reads what the socket has into the down line, arrived now. */
static void read_socket(struct netem *n)
{
	struct wire_msg m;
	struct err e = { "" };
	int got = wire_conn_read(&n->c, &e), r;

	pthread_mutex_lock(&n->mu);
	while ((r = wire_conn_next(&n->c, &m, &n->why)) == 1) {
		if (m.type == WIRE_ERROR) {
			err_set(&n->why, "cloud: %s",
				err_quotable(m.text, WIRE_TEXT_MAX));
			fail(n, m.retry ? NETEM_LOST : -1);
			break;
		}
		if (m.type != WIRE_VERDICT && m.type != WIRE_PONG &&
		    m.type != WIRE_TOKEN) {
			err_set(&n->why, "cloud sent message type %d", m.type);
			fail(n, -1);
			break;
		}
		wan_line_push(&n->down, clock_s(n), &m);
		tell(n);
	}
	if (r < 0) {
		err_prefix(&n->why, "cloud");
		fail(n, -1);
	} else if (got < 0 && !n->fail) { /* what came before the end is kept */
		n->why = e;
		err_prefix(&n->why, "cloud");
		fail(n, NETEM_LOST);
	}
	pthread_mutex_unlock(&n->mu);
}

/* Writes the up line's arrived messages to the socket. Returns the arrival
 * time of the next one still held. */
static double write_due(struct netem *n)
{
	struct wire_msg *m;
	double next;

	pthread_mutex_lock(&n->mu);
	while (!n->fail && (m = wan_line_pop(&n->up, clock_s(n)))) {
		struct err e = { "" };
		int r;

		n->writing = true;
		pthread_mutex_unlock(&n->mu);
		r = wire_conn_send(&n->c, m, &e);
		free(m);
		pthread_mutex_lock(&n->mu);
		n->writing = false;
		n->unwritten = n->c.out_len;
		tell(n);
		if (r < 0) {
			n->why = e;
			err_prefix(&n->why, "cloud");
			fail(n, NETEM_LOST);
		}
	}
	next = wan_line_next_s(&n->up);
	pthread_mutex_unlock(&n->mu);
	return next;
}

static void *run(void *arg)
{
	struct netem *n = arg;
	sigset_t all;

	sigfillset(&all); /* signals are the edge's, not the link's */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p[2] = { { .fd = n->wake[0], .events = POLLIN },
				       { .fd = n->c.fd, .events = POLLIN } };
		double next = write_due(n);
		bool failed;
		char buf[64];

		pthread_mutex_lock(&n->mu);
		if (n->stop) {
			pthread_mutex_unlock(&n->mu);
			return NULL;
		}
		failed = n->fail != 0;
		pthread_mutex_unlock(&n->mu);
		if (failed)
			p[1].fd = -1;
		else if (n->c.out_len)
			p[1].events |= POLLOUT;
		wire_poll(p, 2, next == INFINITY || failed ? -1 :
			  fmax(0, next - clock_s(n)));
		if (p[0].revents & POLLIN)
			while (read(n->wake[0], buf, sizeof(buf)) > 0)
				;
		if (p[1].revents & POLLOUT) {
			wire_conn_flush(&n->c, &(struct err){ 0 });
			pthread_mutex_lock(&n->mu);
			n->unwritten = n->c.out_len;
			tell(n);
			pthread_mutex_unlock(&n->mu);
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			read_socket(n);
	}
}

static void poke(struct netem *n)
{
	ssize_t w = write(n->wake[1], "", 1); /* a full pipe is awake anyway */

	(void)w;
}

int netem_attach(struct netem *n, int fd, const struct wire_msg *first,
		 struct err *e)
{
	HS_ASSERT(!n->running);
	wire_conn_init(&n->c, fd);
	wire_conn_send(&n->c, first, &(struct err){ 0 }); /* a failure shows
							       at the next read */
	n->stop = false;
	n->fail = 0;
	n->unwritten = n->c.out_len;
	if (pipe(n->wake) < 0) {
		wire_conn_release(&n->c);
		return err_set(e, "link thread: pipe: %s", strerror(errno));
	}
	for (int i = 0; i < 2; i++)
		fcntl(n->wake[i], F_SETFL, O_NONBLOCK);
	if (pthread_create(&n->thread, NULL, run, n) != 0) {
		close(n->wake[0]);
		close(n->wake[1]);
		n->wake[0] = n->wake[1] = -1;
		wire_conn_release(&n->c);
		return err_set(e, "link thread: cannot start it");
	}
	n->running = true;
	return 0;
}

void netem_detach(struct netem *n)
{
	if (!n->running)
		return;
	pthread_mutex_lock(&n->mu);
	n->stop = true;
	pthread_mutex_unlock(&n->mu);
	poke(n);
	pthread_join(n->thread, NULL);
	n->running = false;
	close(n->wake[0]);
	close(n->wake[1]);
	n->wake[0] = n->wake[1] = -1;
	wire_conn_release(&n->c);
	wan_line_clear(&n->up);
	wan_line_clear(&n->down);
}

double netem_send(struct netem *n, const struct wire_msg *m)
{
	double at;

	pthread_mutex_lock(&n->mu);
	at = wan_line_push(&n->up, clock_s(n), m);
	pthread_mutex_unlock(&n->mu);
	if (n->running)
		poke(n);
	return at;
}

int netem_take(struct netem *n, struct wire_msg *m, struct err *e)
{
	struct wire_msg *got;
	int r = 0;

	pthread_mutex_lock(&n->mu);
	n->seen = n->changes;
	if ((got = wan_line_pop(&n->down, clock_s(n)))) {
		*m = *got;
		free(got);
		r = 1;
	} else if (n->fail) {
		*e = n->why;
		r = n->fail;
	}
	pthread_mutex_unlock(&n->mu);
	return r;
}

void netem_wait(struct netem *n, double until_s)
{
	pthread_mutex_lock(&n->mu);
	for (;;) {
		double now = clock_s(n), due = fmin(until_s,
						    wan_line_next_s(&n->down));
		double at;
		struct timespec ts;

		if (n->fail || due <= now || n->changes != n->seen ||
		    (!n->running && due == INFINITY))
			break;
		at = n->t0_s + due;
		/* past what a time_t holds (a delay of 1e300 s): no deadline,
		 * where one cast would wrap and spin */
		if (due == INFINITY || !(at < 1e15)) {
			pthread_cond_wait(&n->changed, &n->mu);
			continue;
		}
		ts.tv_sec = (time_t)at;
		ts.tv_nsec = (long)((at - floor(at)) * 1e9);
		pthread_cond_timedwait(&n->changed, &n->mu, &ts);
	}
	pthread_mutex_unlock(&n->mu);
}

bool netem_flushed(struct netem *n)
{
	bool r;

	pthread_mutex_lock(&n->mu);
	n->seen = n->changes;
	r = !link_peek(&n->up.link) && !n->writing && !n->unwritten;
	pthread_mutex_unlock(&n->mu);
	return r;
}

long long netem_bytes(const struct netem *n, bool up)
{
	return (long long)(up ? n->up.link.bytes : n->down.link.bytes);
}

long long netem_losses(const struct netem *n)
{
	return (long long)(n->up.link.losses + n->down.link.losses);
}
