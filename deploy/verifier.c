/* verifier.c: tenant slots and batched greedy verification.
 *
 * For an active request: 0 <= kv_len <= len <= limit <= seq_len; the
 * prompt's prefill is done when kv_len >= len - 1 (the last committed token
 * is fed with the drafts that follow it); pred >= 0 only when kv_len == len;
 * queued drafts start at len (a block one position later means the edge
 * took the bonus pred, which is committed when that block arrives);
 * sum(qb) == qn. A segment feeds seq[kv_len .. len) and then the
 * drafts, from position kv_len, so row r of its logits predicts position
 * kv_len + r + 1. A request the target decodes itself (a handover
 * start, or after a hand-back) prefills up to len instead, the last row
 * giving its next token, which is committed (kv_len == len - 1 again)
 * until it reaches limit or READY made the token its last. An admitted
 * request holds blocks >= ceil(kv_len / block_tokens) of the pool kv
 * (sim/kvpool.h), running the admitted; one waiting for admission holds
 * none (a preempted one has kv_len 0: its prefill computes its committed
 * tokens again). */
#include "verifier.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "mem.h"

void verifier_init(struct verifier *v, const struct llama *m, int budget,
		   int chunk, double hold_s, int slots)
{
	int seq_len = m->c.seq_len;

	HS_ASSERT(budget >= 2 && chunk >= 1 && slots >= 1 && hold_s >= 0);
	*v = (struct verifier){
		.m = m, .budget = budget, .chunk = chunk, .hold_s = hold_s,
		.slots = slots,
		.t = xcalloc((size_t)slots, sizeof(struct vreq)),
		.feed = xcalloc((size_t)budget, sizeof(int)),
		.logits = xcalloc((size_t)budget * m->c.vocab, sizeof(float)),
		.seqs = xcalloc((size_t)slots, sizeof(struct llama_seq)),
		.seg = xcalloc((size_t)slots, sizeof(struct vseg)),
		.order = xcalloc((size_t)slots, sizeof(int)),
		.out = xcalloc((size_t)slots, sizeof(struct vverdict)),
		.tokens = xcalloc((size_t)slots, sizeof(struct vtoken)),
	};
	verifier_kv(v, (long)slots * ((seq_len + 15) / 16), 16, 0, slots);
	llama_state_init(&v->scratch, &m->c, budget);
	for (int i = 0; i < slots; i++) {
		struct vreq *r = &v->t[i];

		r->seq = xcalloc((size_t)seq_len, sizeof(int));
		r->q = xcalloc((size_t)seq_len, sizeof(int));
		r->qb = xcalloc((size_t)seq_len, sizeof(int));
		r->qs = xcalloc((size_t)seq_len, sizeof(double));
	}
}

void verifier_release(struct verifier *v)
{
	for (int i = 0; i < v->slots; i++) {
		struct vreq *r = &v->t[i];

		free(r->seq);
		free(r->q);
		free(r->qb);
		free(r->qs);
		if (r->has_state)
			llama_state_release(&r->st);
	}
	llama_state_release(&v->scratch);
	free(v->t);
	free(v->feed);
	free(v->logits);
	free(v->seqs);
	free(v->seg);
	free(v->order);
	free(v->out);
	free(v->tokens);
	*v = (struct verifier){ 0 };
}

void verifier_kv(struct verifier *v, long blocks, int block_tokens,
		 int watermark, int max_seqs)
{
	HS_ASSERT(blocks >= 1 && block_tokens >= 1 && watermark >= 0 &&
		  max_seqs >= 1 && v->kv.used == 0);
	kvpool_init(&v->kv, blocks, block_tokens);
	v->watermark = watermark;
	v->max_seqs = max_seqs;
}

/* Frees r's blocks: it no longer holds a place. */
static void kv_free(struct verifier *v, struct vreq *r)
{
	if (!r->admitted)
		return;
	kvpool_free(&v->kv, &r->blocks);
	r->admitted = false;
	v->running--;
}

static int check_tokens(const struct verifier *v, const int32_t *tok, int n,
			struct err *e)
{
	for (int i = 0; i < n; i++)
		if (tok[i] < 0 || tok[i] >= v->m->c.vocab)
			return err_set(e, "token %u at %d outside the vocabulary "
				       "of %d", (uint32_t)tok[i], i, v->m->c.vocab);
	return 0;
}

int verifier_prompt(struct verifier *v, int slot, uint32_t id,
		    const int32_t *prompt, int n, int out, double now_s,
		    struct err *e)
{
	struct vreq *r = &v->t[slot];

	if (r->active)
		return err_set(e, "prompt for request %u while request %u is "
			       "active", id, r->id);
	if (n < 1 || out < 1)
		return err_set(e, "request of %d prompt + %d output tokens: one "
			       "of each at least", n, out);
	if ((long)n + out > v->m->c.seq_len)
		return err_set(e, "request of %d prompt + %d output tokens: the "
			       "model's context is %d", n, out, v->m->c.seq_len);
	if (check_tokens(v, prompt, n, e) < 0)
		return -1;
	if (!kvpool_holds(&v->kv, kvpool_blocks_of(&v->kv, (long)n + out),
			  v->watermark))
		return err_set(e, "request of %d prompt + %d output tokens: the "
			       "KV pool holds %lld blocks of %lld tokens%s", n,
			       out, (long long)v->kv.blocks,
			       (long long)v->kv.block_tokens,
			       v->watermark ? ", less its watermark" : "");
	if (!r->has_state) {
		llama_state_init(&r->st, &v->m->c, 1);
		r->has_state = true;
	}
	for (int i = 0; i < n; i++)
		r->seq[i] = prompt[i];
	r->active = true;
	r->id = id;
	r->len = n;
	r->kv_len = 0;
	r->pred = -1;
	r->limit = n + out;
	r->epoch = 0;
	r->qn = r->nqb = 0;
	r->prompt_s = now_s;
	r->admitted = r->in_batch = false;
	r->blocks = 0;
	r->prompt_n = n;
	r->decoding = r->stop = r->started = false;
	return 0;
}

int verifier_decode(struct verifier *v, int slot, uint32_t id, struct err *e)
{
	struct vreq *r = &v->t[slot];

	if (!r->active || r->id != id || r->len != r->prompt_n || r->kv_len)
		return err_set(e, "decode for request %u, which is not a prompt "
			       "just come", id);
	r->decoding = r->started = true;
	return 0;
}

int verifier_handover(struct verifier *v, int slot, uint32_t id, int pos,
		      struct err *e)
{
	struct vreq *r = &v->t[slot];

	if (!r->active || r->id != id)
		return err_set(e, "ready for request %u, which is not active", id);
	if (!r->started)
		return err_set(e, "ready for request %u, which did not begin with "
			       "START", id);
	if (pos < 1 || pos > r->limit)
		return err_set(e, "ready for request %u at position %d: its "
			       "tokens are 1 to %d", id, pos, r->limit);
	r->stop = r->decoding;
	return 0;
}

/* A message for position pos one past r's committed tokens after a fully
 * accepted segment: the edge took the bonus token pred, committed here;
 * limit: the furthest pos may reach. */
static void take_bonus(struct vreq *r, int pos, int limit)
{
	if (!r->qn && r->pred >= 0 && pos == r->len + 1 && pos <= limit) {
		r->seq[r->len++] = r->pred;
		r->pred = -1;
	}
}

int verifier_back(struct verifier *v, int slot, uint32_t id, int pos,
		  struct err *e)
{
	struct vreq *r = &v->t[slot];

	if (!r->active || r->id != id || r->decoding)
		return err_set(e, "back for request %u, which is not active or "
			       "decodes already", id);
	if (r->nqb)
		return err_set(e, "back for request %u with %d blocks queued", id,
			       r->nqb);
	take_bonus(r, pos, r->limit);
	if (pos != r->len)
		return err_set(e, "back for request %u at position %d, its "
			       "committed tokens are %d", id, pos, r->len);
	/* the last committed token is fed again, its row giving the next */
	if (r->kv_len > r->len - 1)
		r->kv_len = r->len - 1;
	r->pred = -1;
	r->decoding = r->len < r->limit;
	r->stop = r->started = false;
	return 0;
}

/* Drops the queued blocks (stale after a rejection). */
static void clear_queue(struct verifier *v, struct vreq *r)
{
	v->stale_dropped += r->nqb;
	r->qn = r->nqb = 0;
}

int verifier_block(struct verifier *v, int slot, uint32_t id, uint32_t epoch,
		   int pos, const int32_t *tokens, int n, double now_s,
		   struct err *e)
{
	struct vreq *r = &v->t[slot];
	int want = r->len + r->qn;

	if (!r->active || r->id != id)
		return err_set(e, "block for request %u, which is not active", id);
	if (epoch < r->epoch) {
		v->stale_dropped++;
		return 1;
	}
	if (epoch > r->epoch)
		return err_set(e, "block of epoch %u, ahead of the cloud's %u",
			       epoch, r->epoch);
	if (n + 1 > v->budget)
		return err_set(e, "block of %d tokens: the batch budget is %d",
			       n, v->budget);
	if (check_tokens(v, tokens, n, e) < 0)
		return -1;
	if (!r->qn) {
		take_bonus(r, pos, r->limit - n);
		want = r->len;
	}
	if (pos != want)
		return err_set(e, "block at position %d, expected %d", pos, want);
	if (pos + n > r->limit)
		return err_set(e, "block past the request's end (%d tokens)",
			       r->limit);
	if (!r->qn)
		r->queued_s = now_s;
	for (int i = 0; i < n; i++)
		r->q[r->qn + i] = tokens[i];
	r->qn += n;
	r->qs[r->nqb] = now_s;
	r->qb[r->nqb++] = n;
	return 0;
}

int verifier_done(struct verifier *v, int slot, uint32_t id, struct err *e)
{
	if (!v->t[slot].active || v->t[slot].id != id)
		return err_set(e, "done for request %u, which is not active", id);
	verifier_drop(v, slot);
	return 0;
}

void verifier_drop(struct verifier *v, int slot)
{
	struct vreq *r = &v->t[slot];

	kv_free(v, r);
	r->active = false;
	r->qn = r->nqb = 0;
}

long verifier_queued(const struct verifier *v)
{
	long n = 0;

	for (int i = 0; i < v->slots; i++)
		if (v->t[i].active)
			n += v->t[i].nqb;
	return n;
}

/* The positions r's cache is to hold before anything else runs: all but
 * the last committed token (fed with the drafts after it), or, while the
 * target decodes it and tokens are left, all of them */
static int fill_to(const struct vreq *r)
{
	return r->decoding && r->len < r->limit ? r->len : r->len - 1;
}

static bool prefilling(const struct vreq *r)
{
	return r->active && r->admitted && r->kv_len < fill_to(r);
}

static bool waiting(const struct vreq *r)
{
	return r->active && !r->admitted;
}

bool verifier_owes(const struct verifier *v, int slot)
{
	const struct vreq *r = &v->t[slot];

	return r->active && (!r->admitted || prefilling(r) || r->nqb > 0);
}

static bool verifiable(const struct vreq *r)
{
	return r->active && r->admitted && r->nqb > 0 && !prefilling(r);
}

/* Whether r, waiting, fits now: under max_seqs, its blocks leaving the
 * watermark free. */
static bool admissible(const struct verifier *v, const struct vreq *r)
{
	return v->running < v->max_seqs &&
	       kvpool_fits(&v->kv, kvpool_blocks_of(&v->kv, r->len),
			   v->watermark);
}

/* The waiting request that came first, or NULL. */
static const struct vreq *first_waiting(const struct verifier *v)
{
	const struct vreq *w = NULL;

	for (int i = 0; i < v->slots; i++)
		if (waiting(&v->t[i]) && (!w || v->t[i].prompt_s < w->prompt_s))
			w = &v->t[i];
	return w;
}

bool verifier_ready(const struct verifier *v, double now_s, double *wait_s)
{
	double oldest = INFINITY;
	long tokens = 0;

	const struct vreq *w = first_waiting(v);

	*wait_s = INFINITY;
	if (w && admissible(v, w)) {
		tokens += w->len;
		oldest = w->prompt_s;
	}
	for (int i = 0; i < v->slots; i++) {
		const struct vreq *r = &v->t[i];

		if (verifiable(r)) {
			tokens += r->len - r->kv_len + r->qn;
			oldest = fmin(oldest, r->queued_s);
		} else if (prefilling(r)) {
			tokens += fill_to(r) - r->kv_len;
			oldest = fmin(oldest, r->prompt_s);
		}
	}
	if (oldest == INFINITY)
		return false;
	if (v->hold_s == 0 || tokens >= v->budget || now_s >= oldest + v->hold_s)
		return true;
	*wait_s = oldest + v->hold_s - now_s;
	return false;
}

/* Slots sorted by a time key (verify or prompt arrival), then slot. */
static const struct verifier *sort_v;
static int sort_prompt;

static int by_time(const void *a, const void *b)
{
	const struct vreq *x = &sort_v->t[*(const int *)a];
	const struct vreq *y = &sort_v->t[*(const int *)b];
	double tx = sort_prompt ? x->prompt_s : x->queued_s;
	double ty = sort_prompt ? y->prompt_s : y->queued_s;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

static int sorted(struct verifier *v, bool (*want)(const struct vreq *),
		  int prompt)
{
	int n = 0;

	for (int i = 0; i < v->slots; i++)
		if (want(&v->t[i]))
			v->order[n++] = i;
	sort_v = v;
	sort_prompt = prompt;
	qsort(v->order, (size_t)n, sizeof(int), by_time);
	return n;
}

/* Judges slot's segment of nd drafts (its logits rows at lg) and updates
 * the request; fills a verdict. */
static void judge(struct verifier *v, int slot, int nblocks, int nd,
		  const float *lg, struct vverdict *out)
{
	struct vreq *r = &v->t[slot];
	int vocab = v->m->c.vocab, len = r->len, kv = r->kv_len;
	int j = 0, b = 0, end = 0, tok = -1;

	*out = (struct vverdict){ .slot = slot, .request = r->id,
				  .epoch = r->epoch, .queued_s = r->qs[0] };
	for (; b < nblocks; b++) {
		end += r->qb[b];
		for (; j < end; j++) {
			int row = len + j - 1 - kv;

			tok = row < 0 ? r->pred :
			      spec_argmax(lg + (size_t)row * vocab, vocab);
			if (tok != r->q[j])
				break;
		}
		if (j < end)
			break;
	}
	for (int i = 0; i < j; i++)
		r->seq[len + i] = r->q[i];
	out->drafts_accepted = j;
	out->verified = (uint32_t)(b < nblocks ? b + 1 : nblocks);
	out->accepted = (uint32_t)b;
	if (b < nblocks) { /* rejected at draft j */
		out->k = (uint32_t)(j - (end - r->qb[b]));
		out->token = (uint32_t)tok;
		r->seq[len + j] = tok;
		r->kv_len = len + j;
		r->len = len + j + 1;
		r->pred = -1;
		r->epoch++;
		v->discarded += nblocks - b - 1;
		r->nqb -= nblocks;
		clear_queue(v, r);
		return;
	}
	r->len = len + nd;
	r->kv_len = r->len;
	r->pred = spec_argmax(lg + (size_t)(r->len - 1 - kv) * vocab, vocab);
	out->token = (uint32_t)r->pred;
	/* the blocks left queued move to the front */
	memmove(r->q, r->q + nd, sizeof(int) * (size_t)(r->qn - nd));
	memmove(r->qb, r->qb + nblocks, sizeof(int) * (size_t)(r->nqb - nblocks));
	memmove(r->qs, r->qs + nblocks,
		sizeof(double) * (size_t)(r->nqb - nblocks));
	r->qn -= nd;
	r->nqb -= nblocks;
}

/* The admitted request that came last of those not in the forming
 * iteration, other than r; r when there is none. */
static struct vreq *victim(struct verifier *v, struct vreq *r)
{
	struct vreq *x = r;

	for (int i = 0; i < v->slots; i++) {
		struct vreq *u = &v->t[i];

		if (u == r || !u->admitted || u->in_batch)
			continue;
		if (x == r || cfg_preempts_first(u->prompt_s, u->id,
						 x->prompt_s, x->id))
			x = u;
	}
	return x;
}

/* kvpool_grow's preemption: the victim of r's growth preempted */
struct growth {
	struct verifier *v;
	struct vreq *r;
};

static bool preempt_victim(void *ctx)
{
	struct growth *g = ctx;
	struct vreq *x = victim(g->v, g->r);

	kv_free(g->v, x);
	x->kv_len = 0;
	g->v->preemptions++;
	return x == g->r;
}

/* Blocks for r's cache to hold tokens, preempting (recompute) while the
 * pool is short; false when r itself was preempted. */
static bool kv_grow(struct verifier *v, struct vreq *r, long tokens)
{
	struct growth g = { v, r };

	return kvpool_grow(&v->kv, &r->blocks, tokens, preempt_victim, &g);
}

/* Adds slot's next n tokens from feed position kv_len to the batch. */
static void add_seq(struct verifier *v, struct viter *it, int slot,
		    int nblocks, int nd, int n)
{
	struct vreq *r = &v->t[slot];
	int *f = v->feed + it->tokens;
	int base = r->len - r->kv_len, out;

	if (nblocks) {
		memcpy(f, r->seq + r->kv_len, sizeof(int) * (size_t)base);
		memcpy(f + base, r->q, sizeof(int) * (size_t)nd);
	} else {
		memcpy(f, r->seq + r->kv_len, sizeof(int) * (size_t)n);
	}
	/* a block's every row is judged; a prefill's last row is read only
	 * when it ends on a token to decode */
	out = nblocks ? n : r->decoding && r->kv_len + n == r->len;
	r->in_batch = true;
	v->seqs[it->seqs] = (struct llama_seq){ &r->st, f, n, r->kv_len, out };
	v->seg[it->seqs] = (struct vseg){ slot, nblocks, nd, it->rows, n };
	it->rows += out;
	it->ctx_sum += r->kv_len;
	it->seqs++;
	it->tokens += n;
}

/* A chunk of r's prefill (slot i) while the budget has room. */
static void add_chunk(struct verifier *v, struct viter *it, int i)
{
	struct vreq *r = &v->t[i];
	int c = fill_to(r) - r->kv_len;

	if (c > v->chunk)
		c = v->chunk;
	if (c > v->budget - it->tokens)
		c = v->budget - it->tokens;
	add_seq(v, it, i, 0, 0, c);
	/* a decoding request's one-token step is no prefill */
	it->prefill_tokens += r->decoding && r->len > r->prompt_n &&
			      r->kv_len == r->len - 1 ? 0 : c;
}

/* The target decoded r's next token from the last row of its chunk (at
 * lg): committed, and flagged the last when READY came. */
static void decoded(struct verifier *v, int slot, const float *lg,
		    struct vtoken *out)
{
	struct vreq *r = &v->t[slot];
	int tok = spec_argmax(lg, v->m->c.vocab);

	r->seq[r->len] = tok;
	*out = (struct vtoken){ .slot = slot, .request = r->id, .pos = r->len,
				.token = tok };
	r->len++;
	if (r->stop && r->len < r->limit) {
		out->last = true;
		r->decoding = r->stop = false;
	}
}

void verifier_iterate(struct verifier *v, struct viter *it)
{
	int n;

	*it = (struct viter){ 0 };
	for (int i = 0; i < v->slots; i++)
		v->t[i].in_batch = false;
	/* verify segments in the order their blocks came, while they fit and
	 * get their blocks */
	n = sorted(v, verifiable, 0);
	for (int i = 0; i < n; i++) {
		struct vreq *r = &v->t[v->order[i]];
		int tok = r->len - r->kv_len, b = 0, nd = 0;

		if (!verifiable(r)) /* preempted by one before it */
			continue;
		while (b < r->nqb &&
		       (it->tokens + tok + r->qb[b] <= v->budget ||
			(!b && !it->seqs))) {
			tok += r->qb[b];
			nd += r->qb[b++];
		}
		if (!b)
			break;
		if (!kv_grow(v, r, (long)r->kv_len + tok))
			continue;
		add_seq(v, it, v->order[i], b, nd, tok);
	}
	/* then a chunk of each admitted prompt, in arrival order */
	n = sorted(v, prefilling, 1);
	for (int i = 0; i < n && it->tokens < v->budget; i++)
		add_chunk(v, it, v->order[i]);
	/* then waiting prompts are admitted, in arrival order, while they
	 * fit */
	n = sorted(v, waiting, 1);
	for (int i = 0; i < n && it->tokens < v->budget; i++) {
		struct vreq *r = &v->t[v->order[i]];

		if (!admissible(v, r))
			break;
		r->admitted = true;
		kvpool_take(&v->kv, &r->blocks, kvpool_blocks_of(&v->kv, r->len));
		v->running++;
		if (prefilling(r))
			add_chunk(v, it, v->order[i]);
	}
	if (it->seqs == 0)
		return;
	llama_forward_batch(v->m, &v->scratch, v->seqs, it->seqs, v->logits);
	for (int i = 0; i < it->seqs; i++) {
		const struct vseg *g = &v->seg[i];

		if (!g->nblocks) {
			struct vreq *r = &v->t[g->slot];

			r->kv_len += g->n;
			if (v->seqs[i].out) /* it ended on a token to decode */
				decoded(v, g->slot, v->logits +
					(size_t)g->row * v->m->c.vocab,
					&v->tokens[it->ntokens++]);
			continue;
		}
		judge(v, g->slot, g->nblocks, g->nd,
		      v->logits + (size_t)g->row * v->m->c.vocab,
		      &v->out[it->nverdicts++]);
		/* after a verdict it keeps the blocks of what its cache holds */
		kvpool_trim(&v->kv, &v->t[g->slot].blocks, v->t[g->slot].kv_len);
	}
}
