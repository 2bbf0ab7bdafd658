/* edge.h: a tenant's device in the real deployment: the W4A16 draft model
 * drafting blocks, the sync or async protocol of docs/protocols.md (epochs,
 * a window of blocks in flight, stale drafts thrown away), its WAN emulated
 * by delay lines in the process (deploy/wan.h), and a log of when each
 * token was committed. When the cloud goes away (closed, killed, stopping,
 * full, silent) the edge dials again with exponential backoff and resumes the
 * request from its committed tokens: they go up as the new prompt, which
 * the verifier prefills again; the drafts in flight are lost. */
#ifndef HS_EDGE_H
#define HS_EDGE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "cfg.h"
#include "llama.h"
#include "tok.h"
#include "wire.h"

#define EDGE_SILENCE_S 60.0 /* edge_opts.silence_s's default, and the longest
			       edge_ping waits for an answer */

struct edge_opts {
	const struct llama *m;      /* borrowed: the draft model */
	const struct tok *tk;       /* borrowed: to print text; NULL: ids */
	int fd;                     /* a connected socket edge_run owns, or -1:
				       dial host:port first */
	const char *host;           /* borrowed: where to dial (again); NULL:
				       a lost cloud ends the run */
	int port;
	double retry_s;             /* how long to keep dialling after the
				       cloud is lost with no verdict since */
	double silence_s;           /* how long the cloud may stay silent
				       while the edge waits for it before it
				       counts as lost (0: forever; the
				       program's default EDGE_SILENCE_S) */
	const uint8_t *secret;      /* borrowed (WIRE_SECRET_BYTES) for HELLO;
				       NULL: none */
	uint32_t tenant;
	uint32_t tokenizer;         /* the draft's tok_fingerprint, for HELLO
				       (0: not said) */
	enum proto_kind proto;      /* PROTO_SYNC or PROTO_ASYNC */
	int gamma, window;          /* window 1 for sync; adaptive: the first
				       block's gamma, the most blocks in flight */
	bool handover;              /* a handover start ("always",
				       docs/protocols.md): the cloud decodes
				       while the edge prefills and catches up */
	bool handback;              /* a hand-back ("faster", hback.h): the
				       cloud decodes the rest when its time a
				       token beats the protocol's */
	struct cfg_adapt adapt;     /* adaptive gamma (docs/adaptive.md) */
	const struct cfg_wan *wan;  /* borrowed: the emulated link */
	uint64_t seed;              /* delay and think-time draws */
	const int *prompts;         /* (requests x prompt_n) borrowed */
	int prompt_n, out_n, requests;
	double stop_s;              /* > 0: no request starts after this */
	struct dist think_s, start_s; /* pause after a request; first start */
	double t0_s;                /* rt_now_s() origin of every time */
	bool spin;                  /* wait by polling, never sleeping: the
				       CPU stays awake (one edge a CPU) */
	FILE *text;                 /* borrowed: committed text, or NULL */
};

/* Runs every request and returns the log (caller frees): {"tenant",
 * "requests": [{"arrive_s", "done_arrive_s", "commits": [[t_s, n], ...],
 * "tokens": [...], with a handover start "start": {"prefilled_s",
 * "ready_arrive_s" (null: no READY went up)}}], "drafted", "wasted",
 * "judged", "accepted", "verdicts", "bytes_up", "bytes_down", "draft_s"
 * (wall time spent in draft steps), "pair_passes" and "pair_pass_s" (the
 * steps that fed two tokens, a bonus token with the last draft, and their
 * wall time), "blocks" (blocks sent), "handovers" and "cloud_tokens"
 * (requests the cloud served first, and the tokens it decoded),
 * "handbacks" and "back_tokens" (requests handed back, and the tokens the
 * cloud decoded after), "reconnects", "resumed_tokens" (output tokens
 * already committed when a request was resumed),
 * "lost_messages" (each costing a retransmission timeout)}; times
 * from t0_s. NULL with e's message when the cloud breaks the protocol,
 * refuses the edge, or stays lost (unreachable, full, or silent for
 * silence_s) for retry_s. */
json_t *edge_run(const struct edge_opts *o, struct err *e);

/* An edge as its program sets it up ("hybridspec edge"). */
struct edge_setup {
	const char *draft;      /* borrowed: NAME[:Q], w4a16 unless Q
				   (mload_spec) */
	const char *prompt;     /* borrowed: every request's prompt text */
	const char *token_file; /* borrowed: the secret's file, or NULL
				   (serve_secret: $HYBRIDSPEC_TOKEN, or none) */
	bool ids;               /* o.text gets token ids, not text */
	bool adaptive;          /* gamma chosen after every verdict in 1..16,
				   the estimates' weight a config's default */
	struct edge_opts o;     /* the rest; edge_proc_init sets m, tk, fd
				   (-1: dial), secret, prompts, prompt_n,
				   adapt, start_s (at once) and t0_s, and
				   window to 1 unless the protocol is
				   windowed */
};

/* An edge set up: the draft loaded, the secret found, the prompts
 * encoded. Set up in place (o points into it): never moved. */
struct edge_proc {
	struct edge_opts o;     /* what edge_run takes */
	struct llama m;         /* owned: the draft */
	struct tok t;           /* owned: its tokenizer */
	uint8_t secret[WIRE_SECRET_BYTES];
	int *prompts;           /* (requests x prompt_n) owned */
};

/* 0, or -1 with e's message and nothing held (a missing model or secret,
 * a prompt and output longer than the draft's context). */
int edge_proc_init(struct edge_proc *p, const struct edge_setup *s,
		   struct err *e);
void edge_proc_release(struct edge_proc *p);

/* Says hello on fd (which it owns and closes; secret as in edge_opts) and
 * pings the cloud n times, one at a time, through an emulated link of a
 * constant round trip rtt_s that takes no time to serialise a message,
 * waiting for each answer as an edge with spin would. *over_s: the mean
 * of each round trip less rtt_s over the n pings after the first few,
 * which is the time the two hosts' software took (network stacks, thread
 * hand-offs, the server's loop). -1 with e's message when the cloud is
 * lost, answers anything but the ping, or leaves one unanswered for
 * EDGE_SILENCE_S. */
int edge_ping(int fd, uint32_t tenant, const uint8_t *secret, double rtt_s,
	      int n, bool spin, double *over_s, struct err *e);

#endif
