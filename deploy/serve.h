/* serve.h: the cloud verifier of the real deployment: a TCP server holding
 * the target model that takes many edge clients at once and verifies
 * their blocks in batches (deploy/verifier.h) on one event loop. A client
 * that breaks the protocol, brings the wrong secret or overstays a limit
 * gets an ERROR message and is disconnected; the other tenants carry on. A
 * client that goes away frees its slot. On SIGINT or SIGTERM the server
 * drains: it stops listening, answers the blocks already queued, takes no
 * new work (prompts and blocks that come are dropped), and once nothing is
 * queued or drain_s has passed tells every client still connected that it
 * is shutting down (an ERROR to come back later) and exits; a second
 * signal ends the drain at once. Every connection's buffers are bounded
 * (wire.h), so its memory is: a slot's request state plus at most
 * 4 + WIRE_MAX_PAYLOAD + 16 KiB read and WIRE_MAX_OUT unsent. */
#ifndef HS_SERVE_H
#define HS_SERVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "cfg.h"
#include "llama.h"
#include "tok.h"
#include "verifier.h"
#include "wire.h"

/* How each line of serve_opts.log begins: a file that does may be
 * replaced by the next --log */
#define SERVE_LOG_HEAD "{\"t_s\":"

struct serve_opts {
	const struct llama *m;   /* borrowed: the target */
	int listen_fd;           /* a listening socket; serve_run owns it */
	enum sched_policy policy;
	int budget, chunk;       /* max batch tokens, prefill chunk */
	long kv_blocks;          /* the paged KV pool (verifier_kv); 0: every
				    slot's whole context */
	int block_tokens, watermark, max_seqs; /* with kv_blocks */
	double window_s;
	int max_clients;
	int max_per_addr;        /* connections from one address; 0: any */
	const uint8_t *secret;   /* borrowed (WIRE_SECRET_BYTES): what HELLO
				    must carry; NULL: not checked */
	uint32_t tokenizer;      /* the target's tok_fingerprint: a HELLO
				    that says another is refused; 0: not
				    checked */
	double hello_s;          /* limits (0: none): HELLO within this of */
	double frame_s;          /* connecting; a frame begun whole within
				    this; a client neither sending nor */
	double idle_s;           /* waiting for a verdict for this long */
	double drain_s;          /* after a signal: at most this answering
				    the blocks queued (0: stop at once) */
	int exit_after;          /* stop once this many clients came and went;
				    0: until SIGINT or SIGTERM */
	FILE *log;               /* borrowed: a JSON line of counters every
				    log_every_s (each begins SERVE_LOG_HEAD),
				    or NULL */
	double log_every_s;
	double t0_s;             /* rt_now_s() origin of the stats' times */
	bool spin;               /* poll without sleeping, as a GPU server's
				    host thread spins: an idle CPU here can
				    run the next batch slower (docs/deploy.md) */
	bool verbose;            /* a line per client event on stderr */
	bool log_iterations;     /* the stats list every iteration */
};

/* Serves until done, or until a stop signal the caller catches
 * (rt_signals_catch, before it loads the model: a signal then drains at
 * once; and restores after it has written the stats, so that a second
 * signal cuts the drain short instead of killing the process); returns
 * the stats (caller frees): "iterations",
 * "busy_s", "batch_tokens", "prefill_tokens", "verdicts",
 * "drafts_accepted", "stale_blocks_dropped", "segment_blocks_discarded",
 * "clients", "protocol_errors", "refused" (wrong secret, too many from an
 * address), "full", "timeouts", "refused_draining", "requests_done",
 * "last_done_s", "verdict_p50_s", "verdict_p99_s" (a block's arrival to
 * its verdict's sending), "max_buffered_bytes" (all connections' buffers
 * at their fullest), "rss_kb", "max_rss_kb", "signal_s" (null without
 * one), "drained_verdicts" (sent after it), "unanswered_blocks" (queued at
 * exit), "preemptions", "kv_blocks" (the pool), "kv_peak_blocks", and
 * with o->log_iterations "iteration_log": [tokens, sequences,
 * their cached context summed, seconds] an iteration. NULL with e's
 * message when the server itself fails. */
json_t *serve_run(const struct serve_opts *o, struct err *e);

/* The protocol state of one client. */
struct serve_client {
	bool hello;       /* HELLO came (it must come first, once) */
	uint32_t tenant;
};

/* Applies message m of the client in slot to the verifier (a HELLO must
 * carry o's secret and say o's tokenizer, where o gives them; o NULL:
 * neither checked): -1 with e's message when it breaks the protocol, -2
 * when its HELLO is refused (either way the server then sends ERROR and
 * disconnects). The event loop's step, and the wire fuzz target's. */
int serve_handle(struct verifier *v, struct serve_client *c, int slot,
		 const struct wire_msg *m, const struct serve_opts *o,
		 double now_s, struct err *e);

/* A listening TCP socket on host:port (port 0: any free one; *port gets
 * it). -1 with e's message. */
int serve_listen(const char *host, int *port, struct err *e);

/* The shared secret a server asks for and its edges bring: the first line
 * of file, or with file NULL $HYBRIDSPEC_TOKEN's value (set but empty:
 * none). 1 with s filled,
 * 0 for none, -1 with e's message. */
int serve_secret(const char *file, uint8_t s[WIRE_SECRET_BYTES],
		 struct err *e);

/* A verifier as its program sets it up ("hybridspec serve"). */
struct serve_setup {
	const char *model;      /* borrowed: the target, NAME[:Q], f32 unless
				   Q (mload_spec) */
	int threads;            /* for its linear layers */
	const char *host;       /* borrowed: the IPv4 address to listen on */
	int port;               /* 0: any free one */
	const char *token_file; /* borrowed: the secret's file, or NULL
				   (serve_secret); only a loopback host
				   (127.x.x.x) may go without a secret */
	const char *log_path;   /* borrowed: the log lines' file, or NULL */
	struct serve_opts o;    /* the policy and limits; serve_proc_init
				   sets m, listen_fd, secret, log and t0_s */
};

/* A verifier set up: the target loaded, the secret found, the log open,
 * the socket listening. Set up in place (o points into it): never moved. */
struct serve_proc {
	struct serve_opts o;    /* what serve_run takes (it owns listen_fd) */
	int port;               /* the port listened on */
	struct llama m;         /* owned: the target, and its m.pool */
	struct tok t;           /* owned: its tokenizer */
	uint8_t secret[WIRE_SECRET_BYTES];
	FILE *log;              /* owned, or NULL */
};

/* 0, or -1 with e's message and nothing held (a missing model or secret,
 * a secret needed, a log that cannot be opened, an address taken). */
int serve_proc_init(struct serve_proc *p, const struct serve_setup *s,
		    struct err *e);
/* Releases all but the socket, which serve_run closes. */
void serve_proc_release(struct serve_proc *p);

#endif
