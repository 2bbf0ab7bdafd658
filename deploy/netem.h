/* netem.h: an edge's emulated WAN, run by a thread of its own beside the
 * edge's computing.
 *
 * The thread owns the connection to the cloud. A message the edge sends
 * waits in the up line (deploy/wan.h) and is written to the socket when it
 * arrives, even while the edge is in the middle of a forward pass; what the
 * socket brings is read as it comes and waits in the down line for its
 * arrival there. The edge takes arrived messages when it is free to: a
 * network card works while the CPU computes, a program reads between its
 * steps. Times are seconds from t0_s (rt_now_s's clock). */
#ifndef HS_NETEM_H
#define HS_NETEM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "wan.h"
#include "wire.h"

#define NETEM_LOST (-2) /* the connection is gone, or the cloud said to
			   come back later */

struct netem {
	double t0_s;
	struct wan_line up, down;  /* guarded by mu */
	struct wire_conn c;        /* the thread's while it runs */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t changed;    /* a message reached the down line or left
				      the up line, or the connection failed */
	int wake[2];               /* a pipe: a message for the up line, or
				      stop */
	bool running, stop;
	bool writing;              /* the thread holds a message popped from
				      the up line, not yet in the socket */
	size_t unwritten;          /* bytes the socket has not taken yet */
	unsigned long changes, seen;
	int fail;                  /* 0, or NETEM_LOST or -1 with why */
	struct err why;
};

/* The lines of a tenant's link w (borrowed), with draws from the streams
 * of seed and tenant; no connection yet. */
void netem_init(struct netem *n, const struct cfg_wan *w, uint64_t seed,
		 uint32_t tenant, double t0_s);
/* Detaches the connection if one is attached, and frees the lines. */
void netem_release(struct netem *n);

/* Takes fd as the connection: writes first on it at once, undelayed (the
 * hello), and starts the thread. -1 with e's message when the thread
 * cannot start. */
int netem_attach(struct netem *n, int fd, const struct wire_msg *first,
		 struct err *e);
/* Stops the thread, closes the connection and throws away what the lines
 * hold (it was for that connection). */
void netem_detach(struct netem *n);

/* Puts m on the up line, sent now. Returns its arrival time at the cloud. */
double netem_send(struct netem *n, const struct wire_msg *m);
/* The oldest message that has reached the edge by now, in m: 1; 0 when
 * none has; NETEM_LOST or -1 (e says why) when the connection failed. */
int netem_take(struct netem *n, struct wire_msg *m, struct err *e);
/* Waits until a message has reached the edge, or one has been written or
 * has arrived since the edge last took or asked netem_flushed, or the
 * connection failed, or until_s. */
void netem_wait(struct netem *n, double until_s);
/* Whether everything sent has been written to the socket. */
bool netem_flushed(struct netem *n);

/* Bytes and messages lost on both lines, over every connection. */
long long netem_bytes(const struct netem *n, bool up);
long long netem_losses(const struct netem *n);

#endif
