/* serve.h: the cloud verifier of the real deployment: a TCP server holding
 * the target model that takes many edge clients at once and verifies
 * their blocks in batches (deploy/verifier.h) on one event loop. A client
 * that breaks the protocol gets an ERROR message and is disconnected; the
 * other tenants carry on. A client that goes away frees its slot. */
#ifndef HS_SERVE_H
#define HS_SERVE_H

#include <jansson.h>
#include <stdbool.h>

#include "cfg.h"
#include "llama.h"
#include "verifier.h"
#include "wire.h"

struct serve_opts {
	const struct llama *m;   /* borrowed: the target */
	int listen_fd;           /* a listening socket; serve_run owns it */
	enum sched_policy policy;
	int budget, chunk;       /* max batch tokens, prefill chunk */
	double window_s;
	int max_clients;
	int exit_after;          /* stop once this many clients came and went;
				    0: until SIGINT or SIGTERM */
	double t0_s;             /* rt_now_s() origin of the stats' times */
	bool spin;               /* poll without sleeping, as a GPU server's
				    host thread spins: an idle CPU here can
				    run the next batch slower (docs/deploy.md) */
	bool verbose;            /* a line per client event on stderr */
};

/* Serves until done; returns the stats (caller frees): "iterations",
 * "busy_s", "batch_tokens", "prefill_tokens", "verdicts",
 * "stale_blocks_dropped", "segment_blocks_discarded", "clients",
 * "protocol_errors", "requests_done", "last_done_s". NULL with e's message
 * when the server itself fails. */
json_t *serve_run(const struct serve_opts *o, struct err *e);

/* The protocol state of one client. */
struct serve_client {
	bool hello;       /* HELLO came (it must come first, once) */
	uint32_t tenant;
};

/* Applies message m of the client in slot to the verifier: -1 with e's
 * message when it breaks the protocol (the server then sends ERROR and
 * disconnects). The event loop's step, and the wire fuzz target's. */
int serve_handle(struct verifier *v, struct serve_client *c, int slot,
		 const struct wire_msg *m, double now_s, struct err *e);

/* A listening TCP socket on host:port (port 0: any free one; *port gets
 * it). -1 with e's message. */
int serve_listen(const char *host, int *port, struct err *e);

#endif
