/* verifier.h: the cloud's side of speculative decoding on the real target
 * model, independent of sockets: each tenant slot holds at most one request
 * (its committed tokens, its KV cache, its epoch and its queued draft
 * blocks); an iteration takes queued work in the simulator's order
 * (docs/protocols.md, "The cloud's iterations": verify segments in FIFO
 * order while they fit the token budget, then prefill chunks, then newly
 * admitted prompts) and runs it as one batch through llama_forward_batch,
 * then judges every segment greedily (a draft token is accepted iff it is
 * the target's arg max).
 *
 * The KV cache is paged as the simulator's `paged` policy pages it
 * (docs/protocols.md, "The KV cache"): a pool of blocks of block_tokens, a
 * request's block count (its block table's length) grown as its K and V
 * are appended and cut back to what a verdict keeps, admission in prompt
 * order under max_seqs and a watermark, and preemption by recompute of the
 * latest-arrived admitted request when a segment cannot get its blocks.
 * The K and V themselves stay in each slot's own cache (the pool bounds
 * what may be held; the models here are small): the blocks are the
 * ledger that admits and preempts.
 *
 * serve (deploy/serve.c) feeds it from the network; calibration times
 * verifier_iterate itself, so the simulator's cost table is the cost of
 * this very code. */
#ifndef HS_VERIFIER_H
#define HS_VERIFIER_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "kvpool.h"
#include "err.h"
#include "llama.h"

struct vreq {
	bool active;
	uint32_t id;
	int *seq;           /* (seq_len) owned: committed tokens */
	int len;            /* committed tokens (prompt included) */
	int kv_len;         /* positions whose K and V are in st */
	int pred;           /* target's arg max for position len, known when
			       kv_len == len (after a fully accepted segment);
			       else -1 */
	int limit;          /* prompt + output tokens: the request's end */
	uint32_t epoch;
	int *q;             /* (seq_len) owned: queued drafts of the epoch,
			       for positions len .. len + qn */
	int qn;
	int *qb, nqb;       /* (seq_len) owned: sizes of the queued blocks */
	double *qs;         /* (seq_len) owned: when each queued block came */
	double queued_s;    /* arrival of the oldest queued block */
	double prompt_s;    /* arrival of the prompt (prefill order) */
	bool admitted;      /* holds blocks; else it waits for admission */
	bool in_batch;      /* a sequence of the forming iteration */
	int32_t blocks;     /* KV blocks it holds */
	bool has_state;
	struct llama_state st; /* KV cache, kept between requests */
	int prompt_n;       /* the prompt's tokens */
	bool decoding;      /* a handover start or a hand-back: the target
			       decodes it, a token each time its cache has
			       caught up */
	bool stop;          /* READY came: its next token is its last */
	bool started;       /* began with START (a handover start): a READY
			       may come */
};

/* A token the target decoded itself (what WIRE_TOKEN carries). */
struct vtoken {
	int slot;
	uint32_t request;
	int pos, token;
	bool last;          /* its last before the edge drafts on */
};

/* A verdict for one tenant (what WIRE_VERDICT carries). */
struct vverdict {
	int slot;
	uint32_t request, epoch, verified, accepted, k, token;
	int drafts_accepted;
	double queued_s;    /* when the oldest block judged arrived */
};

struct viter {
	int tokens, seqs;      /* batch tokens and sequences */
	int rows;              /* logits rows: a block's every token, a
				  decoding step's last */
	long ctx_sum;          /* the sequences' cached context, summed */
	int prefill_tokens;
	int nverdicts;
	int ntokens;           /* tokens decoded, in v->tokens */
};

/* One sequence of an iteration's batch. */
struct vseg {
	int slot;
	int nblocks, nd;     /* verify: blocks and drafts; 0 for a prefill */
	int row, n;          /* its first logits row (if any), its tokens */
};

struct verifier {
	const struct llama *m;  /* borrowed: the target */
	int budget;             /* max batch tokens */
	int chunk;              /* max prefill tokens of a prompt per iteration */
	double hold_s;          /* an iteration short of budget waits this long
				   after its oldest work for more (0: none) */
	int slots;
	/* the KV pool (verifier_kv; by default every slot's whole context) */
	struct kvpool kv;       /* the pool (verifier_kv) */
	int watermark, max_seqs, running;
	long preemptions;
	struct vreq *t;         /* (slots) owned */
	struct llama_state scratch; /* activations for budget tokens */
	int *feed;              /* (budget) owned: the batch's input tokens */
	float *logits;          /* (budget x vocab) owned */
	struct llama_seq *seqs; /* (slots) owned: the batch */
	struct vseg *seg;       /* (slots) owned: what each sequence is */
	int *order;             /* (slots) owned */
	struct vverdict *out;   /* (slots) owned: the last iteration's verdicts */
	struct vtoken *tokens;  /* (slots) owned: the last iteration's decoded
				   tokens */
	long stale_dropped, discarded; /* blocks dropped, old epoch / cut */
};

/* hold_s: cfg_sched_hold_s of the policy */
void verifier_init(struct verifier *v, const struct llama *m, int budget,
		   int chunk, double hold_s, int slots);
void verifier_release(struct verifier *v);

/* Pages the KV cache: a pool of blocks of block_tokens, admissions leaving
 * watermark blocks free, at most max_seqs requests admitted at once. Before
 * any prompt. */
void verifier_kv(struct verifier *v, long blocks, int block_tokens,
		 int watermark, int max_seqs);

/* Starts request id on slot from prompt[0..n) with out more tokens to come;
 * it waits for admission. -1 with e's message for a slot already busy, a
 * token outside the vocabulary, a request longer than the model's context
 * or one the KV pool cannot hold. */
int verifier_prompt(struct verifier *v, int slot, uint32_t id,
		    const int32_t *prompt, int n, int out, double now_s,
		    struct err *e);

/* Queues a draft block: tokens[0..n) for positions pos.. of epoch. Returns
 * 0 when queued, 1 when dropped (an older epoch), -1 with e's message when
 * it breaks the protocol (no such request, a future epoch, a position that
 * does not follow, past the request's end, a block over the budget). A
 * block at the position just after a fully accepted segment's bonus token
 * commits that token first (the edge took it). */
int verifier_block(struct verifier *v, int slot, uint32_t id, uint32_t epoch,
		   int pos, const int32_t *tokens, int n, double now_s,
		   struct err *e);

/* A handover start (docs/protocols.md): the target decodes slot's request
 * id itself, after its prompt (verifier_prompt), a token an iteration
 * (the prefill's last chunk makes the first), until verifier_handover;
 * each token is in v->tokens. -1 with e's message when id is not its
 * request or it has begun. */
int verifier_decode(struct verifier *v, int slot, uint32_t id, struct err *e);
/* READY, the edge at position pos: the next token the target decodes for
 * request id is its last (flagged last); then it waits for blocks. A
 * request it no longer decodes is left as it is. -1 when id is not the
 * slot's request, did not begin with START, or pos lies outside it. */
int verifier_handover(struct verifier *v, int slot, uint32_t id, int pos,
		      struct err *e);
/* BACK: the edge hands request id back at pos, its committed tokens: the
 * target decodes the rest itself, a token an iteration. pos is the
 * committed tokens, or one more after a fully accepted segment (the edge
 * took the bonus token). -1 with e's message when id is not the slot's
 * request, it is decoding already, blocks are queued or pos is neither. */
int verifier_back(struct verifier *v, int slot, uint32_t id, int pos,
		  struct err *e);

/* Ends the slot's request (DONE, or the client went away); -1 when id is
 * not its request. */
int verifier_done(struct verifier *v, int slot, uint32_t id, struct err *e);
void verifier_drop(struct verifier *v, int slot);

/* Whether slot's request is owed work: a prefill or queued blocks. */
bool verifier_owes(const struct verifier *v, int slot);

/* Blocks queued and not yet judged, over every slot. */
long verifier_queued(const struct verifier *v);

/* Whether an iteration should start at now_s; if not and work is waiting
 * for the window, *wait_s gets how long (else INFINITY). */
bool verifier_ready(const struct verifier *v, double now_s, double *wait_s);

/* Runs one iteration (verifier_ready must be true). Verdicts are in
 * v->out[0 .. it->nverdicts), decoded tokens in v->tokens[0 ..
 * it->ntokens); an iteration whose every sequence was preempted runs
 * nothing (it->seqs 0). */
void verifier_iterate(struct verifier *v, struct viter *it);

#endif
