/* test_deploy.c: the real deployment (deploy/): the wire format's frames,
 * the verifier's protocol and greedy verdicts on the stories260K target
 * without sockets, and the server with edge clients in child processes over
 * loopback TCP: lossless outputs, misbehaving clients rejected with an
 * ERROR without disturbing the others, and the slot of a client that went
 * away freed (the rig: rig.h; faults and hostile clients: test_faults.c). */
#define _GNU_SOURCE /* sched_getaffinity, as validate counts its CPUs */
#include "harness.h"
#include "rig.h"

#include "rt.h"
#include "dist.h"
#include "edge.h"
#include "jx.h"
#include "mload.h"
#include "netem.h"
#include "serve.h"
#include "spec.h"
#include "verifier.h"
#include "wire.h"
#include "mem.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* ---- wire ---------------------------------------------------------------- */

static int msg_equal(const struct wire_msg *a, const struct wire_msg *b)
{
	if (a->type != b->type || a->tenant != b->tenant ||
	    a->tokenizer != b->tokenizer || a->request != b->request || a->epoch != b->epoch ||
	    a->pos != b->pos || a->out_tokens != b->out_tokens ||
	    a->verified != b->verified || a->accepted != b->accepted ||
	    a->k != b->k || a->token != b->token || a->n != b->n ||
	    a->retry != b->retry || strcmp(a->text, b->text) ||
	    memcmp(a->secret, b->secret, WIRE_SECRET_BYTES))
		return 0;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->tok[i] != b->tok[i])
			return 0;
	return 1;
}

/* Each message type and its largest forms. */
static struct wire_msg *wire_cases(size_t *n)
{
	static const struct wire_msg fixed[] = {
		{ .type = WIRE_HELLO, .tenant = 0xfedcba98u,
		  .tokenizer = 0x89abcdefu },
		{ .type = WIRE_HELLO, .tenant = 2, .secret = "0123456789abcdef"
		  "0123456789abcdef" },
		{ .type = WIRE_PROMPT, .request = 3, .out_tokens = 64, .n = 4,
		  .tok = { 1, 403, 511, 0 } },
		{ .type = WIRE_BLOCK, .request = 9, .epoch = 2, .pos = 37, .n = 5,
		  .tok = { 7, 0, 511, 70000, -1 } },
		{ .type = WIRE_BLOCK, .request = 1, .epoch = 0, .pos = 4, .n = 1,
		  .tok = { 42 } },
		{ .type = WIRE_DONE, .request = 0xffffffffu },
		{ .type = WIRE_PING, .request = 17 },
		{ .type = WIRE_PONG, .request = 0x80000001u },
		{ .type = WIRE_VERDICT, .request = 5, .epoch = 1, .verified = 3,
		  .accepted = 2, .k = 1, .token = 99 },
		{ .type = WIRE_START, .request = 4, .out_tokens = 8, .n = 2,
		  .tok = { 5, 6 } },
		{ .type = WIRE_TOKEN, .request = 4, .pos = 2, .token = 77,
		  .last = 1 },
		{ .type = WIRE_READY, .request = 4, .pos = 9 },
		{ .type = WIRE_BACK, .request = 4, .pos = 21 },
		{ .type = WIRE_ERROR, .retry = 1, .text = "server full (3 clients)" },
		{ .type = WIRE_ERROR, .text = "" },
	};
	size_t nf = NELEM(fixed);
	struct wire_msg *c = xcalloc(nf + 2, sizeof(*c));

	memcpy(c, fixed, sizeof(fixed));
	/* a prompt of WIRE_MAX_TOKENS, an error text of WIRE_TEXT_MAX */
	c[nf] = (struct wire_msg){ .type = WIRE_PROMPT, .request = 8,
				   .out_tokens = 1, .n = WIRE_MAX_TOKENS };
	for (int i = 0; i < WIRE_MAX_TOKENS; i++)
		c[nf].tok[i] = i * 7;
	c[nf + 1] = (struct wire_msg){ .type = WIRE_ERROR };
	memset(c[nf + 1].text, 'x', WIRE_TEXT_MAX);
	*n = nf + 2;
	return c;
}

/* Every message survives encode and decode; a frame followed by another
 * decodes to its own size; every strict prefix is "not complete yet". */
static void wire_round_trip(void)
{
	size_t n;
	struct wire_msg *c = wire_cases(&n), *got = xmalloc(sizeof(*got));
	uint8_t *buf = xmalloc(2 * (4 + WIRE_MAX_PAYLOAD));

	for (size_t i = 0; i < n; i++) {
		size_t size = wire_size(&c[i]);
		struct err e = { "" };
		long r;

		CHECK(size >= 5 && size <= 4 + WIRE_MAX_PAYLOAD);
		wire_encode(&c[i], buf);
		wire_encode(&c[i], buf + size);
		CHECK_MSG(wire_get32(buf) == size - 4 && buf[4] == c[i].type,
			  "case %zu: header %u %u", i, wire_get32(buf), buf[4]);
		memset(got, 0xa5, sizeof(*got));
		r = wire_decode(buf, 2 * size, got, &e);
		CHECK_MSG(r == (long)size, "case %zu: decode gave %ld of %zu: %s",
			  i, r, size, e.msg);
		CHECK_MSG(msg_equal(got, &c[i]), "case %zu (type %d) differs", i,
			  c[i].type);
		for (size_t len = 0; len < size; len++) {
			r = wire_decode(buf, len, got, &e);
			if (r != 0) {
				CHECK_MSG(0, "case %zu: prefix of %zu bytes gave %ld",
					  i, len, r);
				break;
			}
		}
	}
	free(buf);
	free(got);
	free(c);
}

enum { BASE_HELLO, BASE_PROMPT, BASE_BLOCK, BASE_DONE, BASE_ERROR };

struct bad_frame {
	const char *what;
	int base;          /* the valid frame it starts from */
	int off, width;    /* bytes patched: a byte (1) or a uint32 (4) */
	uint32_t val;
	int extra;         /* bytes appended after the frame */
	const char *want;  /* in the message */
};

/* Malformed frames: -1 with a message that says what is wrong. */
static void wire_rejects(void)
{
	/* offsets: length 0, type 4, fields from 5; BLOCK's n at 17,
	 * PROMPT's at 13 */
	static const struct bad_frame cases[] = {
		{ "payload length 0", BASE_DONE, 0, 4, 0, 0, "frame of 0 bytes" },
		{ "payload over the maximum", BASE_DONE, 0, 4,
		  WIRE_MAX_PAYLOAD + 1, 0, "frame of" },
		{ "length 2^32 - 1", BASE_DONE, 0, 4, 0xffffffffu, 0, "frame of" },
		{ "type 0", BASE_DONE, 4, 1, 0, 0, "unknown message type 0" },
		{ "type 13", BASE_DONE, 4, 1, WIRE_BACK + 1, 0,
		  "unknown message type 13" },
		{ "type 255", BASE_DONE, 4, 1, 255, 0, "unknown message type" },
		{ "hello with a wrong magic", BASE_HELLO, 5, 4, WIRE_MAGIC ^ 1, 0,
		  "magic" },
		{ "hello too short", BASE_HELLO, 0, 4, 9, 0, "needs 45" },
		{ "done too long", BASE_DONE, 0, 4, 9, 4, "needs 5" },
		{ "block with more tokens than bytes", BASE_BLOCK, 17, 4, 4, 0,
		  "needs 33" },
		{ "block with fewer tokens than bytes", BASE_BLOCK, 17, 4, 2, 0,
		  "needs 25" },
		{ "block of 0 tokens", BASE_BLOCK, 17, 4, 0, 0, "0 tokens" },
		{ "block over WIRE_MAX_TOKENS", BASE_BLOCK, 17, 4,
		  WIRE_MAX_TOKENS + 1, 0, "tokens in a message" },
		{ "prompt with more tokens than bytes", BASE_PROMPT, 13, 4, 3, 0,
		  "needs" },
		{ "prompt of 0 tokens", BASE_PROMPT, 13, 4, 0, 0, "0 tokens" },
		{ "error text over WIRE_TEXT_MAX", BASE_ERROR, 0, 4,
		  2 + WIRE_TEXT_MAX + 1, 1, "error text of 201 bytes" },
		{ "error with a retry byte of 2", BASE_ERROR, 5, 1, 2, 0,
		  "retry byte 2" },
	};
	struct wire_msg *base = xcalloc(5, sizeof(*base)), *got = xmalloc(sizeof(*got));
	uint8_t *buf = xcalloc(1, 4 + WIRE_MAX_PAYLOAD + 64);

	base[BASE_HELLO] = (struct wire_msg){ .type = WIRE_HELLO, .tenant = 1 };
	base[BASE_PROMPT] = (struct wire_msg){ .type = WIRE_PROMPT, .request = 1,
					       .out_tokens = 8, .n = 2,
					       .tok = { 1, 2 } };
	base[BASE_BLOCK] = (struct wire_msg){ .type = WIRE_BLOCK, .request = 1,
					      .pos = 5, .n = 3, .tok = { 1, 2, 3 } };
	base[BASE_DONE] = (struct wire_msg){ .type = WIRE_DONE, .request = 1 };
	base[BASE_ERROR] = (struct wire_msg){ .type = WIRE_ERROR };
	memset(base[BASE_ERROR].text, 'x', WIRE_TEXT_MAX);
	for (size_t i = 0; i < NELEM(cases); i++) {
		const struct bad_frame *b = &cases[i];
		size_t size = wire_size(&base[b->base]) + (size_t)b->extra;
		struct err e = { "" };
		long r;

		memset(buf, 'x', 4 + WIRE_MAX_PAYLOAD + 64);
		wire_encode(&base[b->base], buf);
		if (b->width == 1)
			buf[b->off] = (uint8_t)b->val;
		else
			wire_put32(buf + b->off, b->val);
		r = wire_decode(buf, size, got, &e);
		CHECK_MSG(r == -1, "%s: decode gave %ld", b->what, r);
		CHECK_MSG(strstr(e.msg, b->want), "%s: message '%s', want '%s'",
			  b->what, e.msg, b->want);
	}
	free(buf);
	free(got);
	free(base);
}

/* ---- verifier ------------------------------------------------------------- */

#define V_BUDGET 64      /* batch tokens */
#define V_CHUNK 16       /* prefill tokens per prompt per iteration */
#define V_SLOTS 3
#define V_PROMPT 20      /* > V_CHUNK + 1: the prefill takes two chunks */
#define V_OUT 30
#define V_LONG_OUT 80   /* room for a block left out of a full batch */
#define V_MAX_ITERS 16   /* iterations a step may take */
#define V_ID 7           /* the request on slot 0 */

static const char v_text[] = "Once upon a time, there was a little girl "
			     "named Lily. She loved to play outside in the park.";
static const char v_text2[] = "Tom and his dog went to the big green hill "
			      "to look for a red ball that they had lost.";

/* Runs iterations while work is ready (at most V_MAX_ITERS); the verdicts
 * go to out (V_SLOTS at most). Returns their count. */
static int drain(struct verifier *v, struct vverdict *out)
{
	int n = 0;
	double wait;

	for (int i = 0; i < V_MAX_ITERS && verifier_ready(v, 0, &wait); i++) {
		struct viter it;

		verifier_iterate(v, &it);
		CHECK(it.tokens <= V_BUDGET && it.prefill_tokens <= it.tokens);
		for (int j = 0; j < it.nverdicts && n < V_SLOTS; j++)
			out[n++] = v->out[j];
	}
	CHECK_MSG(!verifier_ready(v, 0, &wait), "work left after %d iterations",
		  V_MAX_ITERS);
	return n;
}

static void check_verdict(const char *step, const struct vverdict *g,
			  const struct vverdict *w)
{
	CHECK_MSG(g->slot == w->slot && g->request == w->request &&
		  g->epoch == w->epoch && g->verified == w->verified &&
		  g->accepted == w->accepted && g->k == w->k &&
		  g->token == w->token && g->drafts_accepted == w->drafts_accepted,
		  "%s: verdict slot %d request %u epoch %u verified %u accepted "
		  "%u k %u token %u drafts %d; want %d %u %u %u %u %u %u %d", step,
		  g->slot, g->request, g->epoch, g->verified, g->accepted, g->k,
		  g->token, g->drafts_accepted, w->slot, w->request, w->epoch,
		  w->verified, w->accepted, w->k, w->token, w->drafts_accepted);
}

/* Queues tokens[0..n) as a block; returns verifier_block's result and
 * reports an unexpected one. */
static int block(struct verifier *v, int slot, uint32_t id, uint32_t epoch,
		 int pos, const int *tokens, int n, int want)
{
	int32_t t[V_BUDGET + 1];
	struct err e = { "" };
	int r;

	HS_ASSERT(n <= V_BUDGET + 1);
	for (int i = 0; i < n; i++)
		t[i] = tokens[i];
	r = verifier_block(v, slot, id, epoch, pos, t, n, 0, &e);
	CHECK_MSG(r == want, "block at %d of %d tokens (epoch %u): %d, want %d: "
		  "%s", pos, n, epoch, r, want, e.msg);
	return r;
}

#define PAST_END (-1)         /* n: one token past the request's end */
#define TOK_VOCAB INT32_MIN   /* bad_tok: the vocabulary's size */

struct vbad {
	const char *what;
	int slot;
	uint32_t id, epoch_ahead;
	int pos_off;     /* from the expected position */
	int n;           /* tokens, or PAST_END */
	int bad_at;      /* -1: every token valid */
	int32_t bad_tok;
	const char *want;
};

/* The verifier on the stories260K target: greedy verdicts, the bonus rule,
 * rejections and epochs, stale blocks, protocol errors, a freed slot. */
/* The target (FP32) with its tokenizer, and for each text its prompt of
 * V_PROMPT tokens p[i] and greedy continuation g[i]; a reported failure
 * (-1) leaves nothing loaded. */
static int v_target(struct llama *m, struct tok *t, const char *const *texts,
		    int ntexts, int (*p)[V_PROMPT], int (*g)[V_OUT])
{
	struct quant q;
	struct err e = { "" };

	if (!t_need_models())
		return -1;
	if (mload_spec(TARGET, "f32", m, t, &q, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return -1;
	}
	for (int i = 0; i < ntexts; i++) {
		if (prompt_of(t, texts[i], V_PROMPT, p[i]) < 0) {
			CHECK_MSG(0, "'%s' is shorter than %d tokens", texts[i],
				  V_PROMPT);
			llama_release(m);
			tok_release(t);
			return -1;
		}
		spec_greedy(m, p[i], V_PROMPT, V_OUT, g[i]);
	}
	return 0;
}

/* A hand-back (verifier_back): refused with blocks queued, for another
 * request, at a position other than the committed tokens (or one more, the
 * bonus the edge took), and for a request decoding already; taken, the
 * target decodes the rest itself, a token an iteration, each its greedy
 * one. */
static void verifier_hands_back(void)
{
	const char *const texts[] = { v_text };
	struct llama m;
	struct tok t;
	struct err e = { "" };
	struct verifier v;
	struct vverdict out[V_SLOTS];
	int pp[1][V_PROMPT], gg[1][V_OUT], *p = pp[0], *g = gg[0];
	int n = V_PROMPT, next;
	double wait;

	if (v_target(&m, &t, texts, 1, pp, gg) < 0)
		return;
	verifier_init(&v, &m, V_BUDGET, V_CHUNK, 0, V_SLOTS);
	CHECK(verifier_prompt(&v, 0, V_ID, p, n, V_OUT, 0, &e) == 0);
	block(&v, 0, V_ID, 0, n, g, 3, 0);
	CHECK(drain(&v, out) == 1 && v.t[0].len == n + 3);
	/* a block queued (the bonus taken): no hand-back yet */
	block(&v, 0, V_ID, 0, n + 4, g + 4, 3, 0);
	CHECK(verifier_back(&v, 0, V_ID, n + 7, &e) == -1 &&
	      strstr(e.msg, "queued"));
	CHECK(drain(&v, out) == 1 && v.t[0].len == n + 7);
	CHECK(verifier_back(&v, 0, V_ID + 1, n + 8, &e) == -1 &&
	      strstr(e.msg, "not active"));
	CHECK(verifier_back(&v, 0, V_ID, n + 9, &e) == -1 &&
	      strstr(e.msg, "committed tokens are"));
	CHECK(v.t[0].len == n + 7);
	/* back one past the committed tokens: the bonus the edge took */
	CHECK_MSG(verifier_back(&v, 0, V_ID, n + 8, &e) == 0, "%s", e.msg);
	CHECK(v.t[0].len == n + 8 && v.t[0].seq[n + 7] == g[7]);
	CHECK(verifier_back(&v, 0, V_ID, n + 8, &e) == -1 &&
	      strstr(e.msg, "decodes already"));
	next = n + 8;
	for (int i = 0; i < 4 * V_OUT && verifier_ready(&v, 0, &wait); i++) {
		struct viter it;

		verifier_iterate(&v, &it);
		CHECK(it.nverdicts == 0 && it.ntokens <= 1);
		for (int j = 0; j < it.ntokens; j++, next++) {
			const struct vtoken *k = &v.tokens[j];

			CHECK_MSG(k->pos == next && k->token == g[next - n] &&
				  !k->last, "token %d at %d: %d, the greedy %d",
				  j, k->pos, k->token, g[next - n]);
		}
	}
	CHECK_MSG(next == n + V_OUT, "decoded to %d of %d", next, n + V_OUT);
	verifier_release(&v);
	llama_release(&m);
	tok_release(&t);
}

static void verifier_protocol(void)
{
	static const struct vbad bad[] = {
		{ "block before any prompt", 1, 0, 0, 0, 3, -1, 0, "not active" },
		{ "block of another request", 0, V_ID + 1, 0, 0, 3, -1, 0,
		  "not active" },
		{ "block of a future epoch", 0, V_ID, 1, 0, 3, -1, 0, "ahead" },
		{ "block past the expected position", 0, V_ID, 0, 3, 3, -1, 0,
		  "expected" },
		{ "block before the expected position", 0, V_ID, 0, -1, 3, -1, 0,
		  "expected" },
		{ "block past the request's end", 0, V_ID, 0, 0, PAST_END, -1, 0,
		  "past the request's end" },
		{ "token at the vocabulary's size", 0, V_ID, 0, 0, 3, 1, TOK_VOCAB,
		  "outside the vocabulary" },
		{ "negative token", 0, V_ID, 0, 0, 3, 0, -1,
		  "outside the vocabulary" },
		{ "bad token in a block that would take the bonus", 0, V_ID, 0,
		  1, 3, 0, TOK_VOCAB, "outside the vocabulary" },
		{ "block of the budget's size", 0, V_ID, 0, 0, V_BUDGET, -1, 0,
		  "budget" },
	};
	const char *const texts[] = { v_text, v_text2 };
	struct llama m;
	struct tok t;
	struct err e = { "" };
	struct verifier v;
	struct vverdict out[V_SLOTS];
	int pp[2][V_PROMPT], gg[2][V_OUT], *p = pp[0], *p2 = pp[1], *g = gg[0],
	    *g2 = gg[1], wrong[3], nv, n = V_PROMPT;
	long stale, discarded;

	if (v_target(&m, &t, texts, 2, pp, gg) < 0)
		return;
	verifier_init(&v, &m, V_BUDGET, V_CHUNK, 0, V_SLOTS);
	CHECK(verifier_prompt(&v, 0, V_ID, p, n, V_OUT, 0, &e) == 0);

	/* two blocks of the greedy continuation, queued during the prefill:
	 * both accepted, the bonus is the next greedy token */
	block(&v, 0, V_ID, 0, n, g, 3, 0);
	block(&v, 0, V_ID, 0, n + 3, g + 3, 3, 0);
	nv = drain(&v, out);
	CHECK_MSG(nv == 1, "%d verdicts", nv);
	check_verdict("accepted", &out[0],
		      &(struct vverdict){ 0, V_ID, 0, 2, 2, 0, (uint32_t)g[6], 6, 0 });
	CHECK(v.t[0].len == n + 6);

	/* the edge took the bonus: its next block starts one further */
	block(&v, 0, V_ID, 0, n + 7, g + 7, 3, 0);
	CHECK(v.t[0].len == n + 7 && v.t[0].seq[n + 6] == g[6]);
	nv = drain(&v, out);
	CHECK_MSG(nv == 1, "%d verdicts", nv);
	check_verdict("bonus taken", &out[0],
		      &(struct vverdict){ 0, V_ID, 0, 1, 1, 0, (uint32_t)g[10], 3, 0 });

	/* the bonus not taken (its first draft is judged against it); the
	 * second block's 3rd token is wrong; the third block is discarded */
	wrong[0] = g[13];
	wrong[1] = g[14];
	wrong[2] = (g[15] + 1) % m.c.vocab;
	stale = v.stale_dropped;
	discarded = v.discarded;
	block(&v, 0, V_ID, 0, n + 10, g + 10, 3, 0);
	block(&v, 0, V_ID, 0, n + 13, wrong, 3, 0);
	block(&v, 0, V_ID, 0, n + 16, g + 16, 3, 0);
	nv = drain(&v, out);
	CHECK_MSG(nv == 1, "%d verdicts", nv);
	check_verdict("rejected", &out[0],
		      &(struct vverdict){ 0, V_ID, 0, 2, 1, 2, (uint32_t)g[15], 5, 0 });
	CHECK(v.t[0].epoch == 1 && v.t[0].len == n + 16);
	CHECK(v.discarded == discarded + 1 && v.stale_dropped == stale);

	/* a block of the old epoch is dropped; the new epoch goes on */
	block(&v, 0, V_ID, 0, n + 16, g + 16, 3, 1);
	CHECK(v.stale_dropped == stale + 1);
	block(&v, 0, V_ID, 1, n + 16, g + 16, 3, 0);
	nv = drain(&v, out);
	CHECK_MSG(nv == 1, "%d verdicts", nv);
	check_verdict("new epoch", &out[0],
		      &(struct vverdict){ 0, V_ID, 1, 1, 1, 0, (uint32_t)g[19], 3, 0 });

	/* protocol errors: -1, a message, nothing queued */
	stale = v.stale_dropped;
	for (size_t i = 0; i < NELEM(bad); i++) {
		const struct vbad *b = &bad[i];
		int32_t tok[V_BUDGET];
		int want = v.t[0].len, k = b->n == PAST_END ?
				       v.t[0].limit - want + 1 : b->n, r;

		for (int j = 0; j < V_BUDGET; j++)
			tok[j] = g[j % V_OUT];
		if (b->bad_at >= 0)
			tok[b->bad_at] = b->bad_tok == TOK_VOCAB ? m.c.vocab :
				      b->bad_tok;
		e.msg[0] = 0;
		r = verifier_block(&v, b->slot, b->id,
				   v.t[0].epoch + b->epoch_ahead,
				   want + b->pos_off, tok, k, 0, &e);
		CHECK_MSG(r == -1, "%s: %d", b->what, r);
		CHECK_MSG(strstr(e.msg, b->want), "%s: message '%s', want '%s'",
			  b->what, e.msg, b->want);
		CHECK_MSG(v.t[0].len == want, "%s: the sequence changed", b->what);
	}
	{
		double wait;

		CHECK(!verifier_ready(&v, 0, &wait) && v.stale_dropped == stale);
	}
	CHECK(verifier_prompt(&v, 0, V_ID + 1, p2, n, 4, 0, &e) == -1 &&
	      strstr(e.msg, "active"));
	CHECK(verifier_prompt(&v, 1, 1, p2, n, m.c.seq_len, 0, &e) == -1 &&
	      strstr(e.msg, "context"));
	{
		int32_t badp[2] = { 1, m.c.vocab };

		CHECK(verifier_prompt(&v, 1, 1, badp, 2, 4, 0, &e) == -1 &&
		      strstr(e.msg, "vocabulary"));
	}
	CHECK(!v.t[1].active);

	/* done frees the slot: a new request on it, beside one on slot 2 */
	CHECK(verifier_done(&v, 0, V_ID + 1, &e) == -1);
	CHECK(verifier_done(&v, 0, V_ID, &e) == 0);
	CHECK(verifier_done(&v, 0, V_ID, &e) == -1);
	block(&v, 0, V_ID, 1, n + 19, g + 19, 3, -1);
	CHECK(verifier_prompt(&v, 0, V_ID + 2, p2, n, V_LONG_OUT, 0, &e) == 0);
	CHECK(verifier_prompt(&v, 2, 1, p, n, V_OUT, 0, &e) == 0);
	block(&v, 0, V_ID + 2, 0, n, g2, 4, 0);
	block(&v, 2, 1, 0, n, g, 4, 0);
	nv = drain(&v, out);
	CHECK_MSG(nv == 2, "%d verdicts", nv);
	for (int i = 0; i < nv; i++)
		check_verdict("reused slot", &out[i], out[i].slot == 0 ?
			      &(struct vverdict){ 0, V_ID + 2, 0, 1, 1, 0,
						  (uint32_t)g2[4], 4, 0 } :
			      &(struct vverdict){ 2, 1, 0, 1, 1, 0,
						  (uint32_t)g[4], 4, 0 });

	/* a segment cut by the budget: rejected at its 2nd draft, the block
	 * left out is stale (dropped, not discarded) */
	{
		int x[5] = { g2[4], (g2[5] + 1) % m.c.vocab, g2[6], g2[7], g2[8] };
		int y[V_BUDGET - 4]; /* 5 + this > V_BUDGET */

		for (size_t i = 0; i < NELEM(y); i++)
			y[i] = g2[i % V_OUT];
		stale = v.stale_dropped;
		discarded = v.discarded;
		block(&v, 0, V_ID + 2, 0, n + 4, x, 5, 0);
		block(&v, 0, V_ID + 2, 0, n + 9, y, (int)NELEM(y), 0);
		nv = drain(&v, out);
		CHECK_MSG(nv == 1, "%d verdicts", nv);
		check_verdict("cut by the budget", &out[0],
			      &(struct vverdict){ 0, V_ID + 2, 0, 1, 0, 1,
						  (uint32_t)g2[5], 1, 0 });
		CHECK(v.stale_dropped == stale + 1 && v.discarded == discarded);
		CHECK(v.t[0].epoch == 1 && v.t[0].len == n + 6);
	}
	verifier_release(&v);
	llama_release(&m);
	tok_release(&t);
}

#define P_BLOCKS 6   /* the paged pool: 96 tokens for three 50-token requests */
#define P_GAMMA 4

/* The verifier with a paged KV pool too small for its three requests at
 * once: they are admitted as their prompts fit, one that cannot get its
 * next block preempts the latest-arrived (recomputed later), the pool is
 * never overdrawn, and every output is still the target's greedy one. */
static void verifier_paged(void)
{
	const char *texts[V_SLOTS] = { v_text, v_text2, v_text };
	struct llama m;
	struct tok t;
	struct quant q;
	struct err e = { "" };
	struct verifier v;
	int p[V_SLOTS][V_PROMPT], g[V_SLOTS][V_OUT], n = V_PROMPT, left = V_SLOTS;
	int iters = 0;
	long peak = 0;

	if (!t_need_models())
		return;
	if (mload_spec(TARGET, "f32", &m, &t, &q, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return;
	}
	verifier_init(&v, &m, V_BUDGET, V_CHUNK, 0, V_SLOTS);
	verifier_kv(&v, P_BLOCKS, 16, 0, V_SLOTS);
	for (int i = 0; i < V_SLOTS; i++) {
		CHECK(prompt_of(&t, texts[i], V_PROMPT, p[i]) == 0);
		spec_greedy(&m, p[i], n, V_OUT, g[i]);
		CHECK_MSG(verifier_prompt(&v, i, (uint32_t)i, p[i], n, V_OUT, i,
					  &e) == 0, "%s", e.msg);
	}
	/* a request of 97 tokens is more than the pool */
	verifier_drop(&v, 2);
	CHECK(verifier_prompt(&v, 2, 9, p[2], n, 77, 2, &e) == -1 &&
	      strstr(e.msg, "KV pool holds 6 blocks of 16 tokens"));
	CHECK(verifier_prompt(&v, 2, 2, p[2], n, V_OUT, 2, &e) == 0);
	while (left && iters < 400) {
		double wait;

		for (int i = 0; i < V_SLOTS; i++) {
			struct vreq *r = &v.t[i];
			int pos = r->len, k = r->limit - pos;

			if (!r->active || r->nqb)
				continue;
			if (pos + (r->pred >= 0) >= r->limit) {
				CHECK(verifier_done(&v, i, r->id, &e) == 0);
				left--;
				continue;
			}
			if (k > P_GAMMA)
				k = P_GAMMA;
			block(&v, i, r->id, r->epoch, pos, g[i] + pos - n, k, 0);
		}
		if (!left || !verifier_ready(&v, 0, &wait))
			continue;
		verifier_iterate(&v, &(struct viter){ 0 });
		CHECK(v.kv.used <= P_BLOCKS && v.running <= V_SLOTS);
		if (v.kv.used > peak)
			peak = v.kv.used;
		iters++;
	}
	CHECK_MSG(left == 0, "%d requests left after %d iterations", left, iters);
	CHECK_MSG(v.preemptions > 0, "no preemption");
	CHECK(peak == P_BLOCKS && v.kv.used == 0 && v.running == 0);
	for (int i = 0; i < V_SLOTS; i++)
		CHECK(v.t[i].len >= n + V_OUT - 1);
	for (int i = 0; i < V_SLOTS; i++)
		for (int j = n; j < v.t[i].len; j++)
			CHECK_MSG(v.t[i].seq[j] == g[i][j - n], "request %d position "
				  "%d: %d, the target's greedy %d", i, j,
				  v.t[i].seq[j], g[i][j - n]);
	verifier_release(&v);
	llama_release(&m);
	tok_release(&t);
}

#define LB_EDGES 7 /* every kind of e_kinds */

/* An edge of each kind (sync and async, adaptive, with a handover start,
 * with a hand-back) over loopback TCP: every output is the target's
 * greedy one. */
static void loopback_lossless(void)
{
	static struct rig r;
	int ok = 1;

	if (rig_init(&r) < 0)
		return;
	if (start_server(&r, LB_EDGES, LB_EDGES) < 0)
		ok = 0;
	for (uint32_t i = 0; ok && i < LB_EDGES; i++)
		ok = start_edge(&r, i, -1, -1) == 0;
	if (!ok && r.k.n)
		kill(r.k.pid[0], SIGKILL); /* the server waits for nobody */
	if (kids_wait(&r.k, CHILD_DEADLINE_S) && ok) {
		for (uint32_t i = 0; i < LB_EDGES; i++)
			json_decref(check_edge_log(&r, i));
		check_server(LB_EDGES, LB_EDGES * E_REQUESTS, 0);
	}
	rig_release(&r);
}

/* The hand-back edges (e_kinds 5 and 6: async with 2 blocks in flight,
 * sync after a handover start) alone with the server, over a 50 ms link:
 * sync's and async's expected time a token (about 17 and 6.5 ms at this
 * draft's speed) is far above the cloud's verification (a fraction of a
 * millisecond; a few under ASan), so requests are handed back from their
 * third verdict, and the cloud's tokens keep every output the target's
 * greedy one. Each edge must hand back one of its requests at least, not
 * all: the cloud's time is a verdict's round trip less the link's, and
 * one verdict held up on a loaded machine (CI's: 3 of 4 once) weighs on
 * the estimate for a few verdicts, past a 40-token request's end. */
static void loopback_handback(void)
{
	static struct rig r;
	int ok = 1;

	if (rig_init(&r) < 0)
		return;
	if (rig_wan(&r, "{\"rtt_s\": 0.05}") < 0 || start_server(&r, 2, 2) < 0)
		ok = 0;
	for (uint32_t i = 5; ok && i < 7; i++)
		ok = start_edge(&r, i, -1, -1) == 0;
	if (!ok && r.k.n)
		kill(r.k.pid[0], SIGKILL);
	if (kids_wait(&r.k, CHILD_DEADLINE_S) && ok) {
		for (uint32_t i = 5; i < 7; i++) {
			json_t *log = check_edge_log(&r, i);
			long long backs = stat_of(log, "handbacks");

			CHECK_MSG(backs >= 1 && backs <= E_REQUESTS,
				  "edge %u: %lld hand-backs of %d requests", i,
				  backs, E_REQUESTS);
			json_decref(log);
		}
		check_server(2, 2 * E_REQUESTS, 0);
	}
	rig_release(&r);
}

/* A fake cloud for edge_bad_verdicts: takes the edge's messages until its
 * first BLOCK (so that a block is in flight whatever the machine's pace),
 * then sends the verdict v and returns. */
struct fake_cloud {
	int fd;
	struct wire_msg v;
};

static void *fake_cloud(void *arg)
{
	struct fake_cloud *f = arg;
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	struct err e = { "" };

	while (recv_msg(f->fd, m, &e) == 1)
		if (m->type == WIRE_BLOCK) {
			send_msg(f->fd, &f->v);
			break;
		}
	free(m);
	return NULL;
}

/* Answers an edge refuses, each sent once the edge's first block is in
 * flight: a token past the draft's vocabulary (a cloud of another
 * tokenizer) is named as such, not as a protocol error; a verdict that
 * judges no block is one, and its token is then not what is blamed; a
 * pong no ping asked for is named, not read as a verdict; a cloud's
 * error text reaches the message with its control bytes made '?'. */
static void edge_bad_verdicts(void)
{
	static const struct {
		enum wire_type type;
		uint32_t verified;
		bool past_vocab; /* the token at the vocabulary's size */
		const char *text;
		const char *want;
	} cases[] = {
		{ WIRE_VERDICT, 1, true, "",
		  "token 512, past the draft's vocabulary of 512" },
		{ WIRE_VERDICT, 0, false, "",
		  "0 blocks judged, 0 accepted) that does not match" },
		{ WIRE_VERDICT, 0, true, "", "that does not match" },
		{ WIRE_PONG, 0, false, "",
		  "the cloud answered a ping (0) this edge did not send" },
		{ WIRE_ERROR, 0, false, "go \033[2Jaway\n",
		  "cloud: go ?[2Jaway?" },
	};
	static struct rig r;

	if (rig_init(&r) < 0)
		return;
	for (size_t i = 0; i < NELEM(cases); i++) {
		struct fake_cloud f;
		struct err e = { "" };
		pthread_t th;
		json_t *log;
		int fds[2];

		CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
		f = (struct fake_cloud){ .fd = fds[1], .v = {
			.type = cases[i].type, .verified = cases[i].verified,
			.token = cases[i].past_vocab ? (uint32_t)r.draft.c.vocab
						     : 5 } };
		strcpy(f.v.text, cases[i].text);
		CHECK(pthread_create(&th, NULL, fake_cloud, &f) == 0);
		log = edge_run(&(struct edge_opts){
			.m = &r.draft, .fd = fds[0], .proto = PROTO_SYNC,
			.gamma = 4, .window = 1, .wan = &r.wan, .seed = 1,
			.prompts = r.prompts[0], .prompt_n = E_PROMPT,
			.out_n = E_OUT, .requests = 1,
			.think_s = dist_constant(0), .start_s = dist_constant(0),
			.t0_s = rt_now_s(), .silence_s = EDGE_SILENCE_S }, &e);
		pthread_join(th, NULL); /* edge_run closed its end: it ends */
		close(fds[1]);
		CHECK_MSG(!log && strstr(e.msg, cases[i].want) &&
			  (cases[i].verified || !strstr(e.msg, "vocabulary")),
			  "case %zu: %s", i, log ? "a log" : e.msg);
		json_decref(log);
	}
	rig_release(&r);
}

/* A PING is answered at once with a PONG of its number: edge_ping's 10
 * pings through a link of a 4 ms round trip each come back (no sooner
 * than the link allows), and the server saw one client and no error. */
static void loopback_ping(void)
{
	static struct rig r;
	struct err e = { "" };
	double over = -1;
	int fd, ok = 1;

	if (rig_init(&r) < 0)
		return;
	if (start_server(&r, 1, 1) < 0)
		ok = 0;
	if (ok && (fd = wire_dial("127.0.0.1", r.port, &e)) >= 0) {
		ok = edge_ping(fd, 3, NULL, 0.004, 10, false, &over, &e) == 0;
		CHECK_MSG(ok, "edge_ping: %s", e.msg);
		CHECK_MSG(!ok || (over >= 0 && over < 1), "each round trip over "
			  "the link's 4 ms by %.6f s", over);
	} else {
		CHECK_MSG(0, "dial: %s", e.msg);
		ok = 0;
	}
	if (!ok && r.k.n)
		kill(r.k.pid[0], SIGKILL);
	if (kids_wait(&r.k, CHILD_DEADLINE_S) && ok)
		check_server(1, 0, 0);
	rig_release(&r);
}

#define MB_CLIENTS 3  /* max_clients: the two edges and one more */
#define MB_EDGES 2
#define MB_RAW_OUT 6  /* output tokens of the raw clients' requests */

struct bad_client {
	const char *what;
	enum { BAD_OVERSIZED,    /* a frame longer than WIRE_MAX_PAYLOAD */
	       BAD_NO_HELLO,     /* a BLOCK before HELLO */
	       BAD_PROMPT,       /* HELLO, then a PROMPT of out and tok0 */
	       BAD_READY,        /* the same, then a READY (no START) */
	       BAD_TOKENIZER } kind; /* HELLO saying another tokenizer */
	uint32_t out, tok0;
	const char *want;  /* in the ERROR's text */
};

/* A raw client: HELLO, a PROMPT of prompts[pi], a BLOCK of its first
 * greedy tokens, whose VERDICT must accept them. */
static int raw_request(struct rig *r, int fd, uint32_t tenant, int pi)
{
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	struct err e = { "" };
	int ok = 0, sent;

	*m = (struct wire_msg){ .type = WIRE_HELLO, .tenant = tenant };
	sent = send_msg(fd, m) == 0;
	*m = (struct wire_msg){ .type = WIRE_PROMPT, .request = 0,
				.out_tokens = MB_RAW_OUT, .n = E_PROMPT };
	for (int i = 0; i < E_PROMPT; i++)
		m->tok[i] = r->prompts[pi][i];
	sent = sent && send_msg(fd, m) == 0;
	*m = (struct wire_msg){ .type = WIRE_BLOCK, .request = 0, .epoch = 0,
				.pos = E_PROMPT, .n = 3 };
	for (int i = 0; i < 3; i++)
		m->tok[i] = r->want[pi][i];
	sent = sent && send_msg(fd, m) == 0;
	if (!sent || recv_msg(fd, m, &e) != 1) {
		CHECK_MSG(0, "tenant %u: %s", tenant,
			  sent ? e.msg : "send failed");
		free(m);
		return 0;
	}
	CHECK_MSG(m->type == WIRE_VERDICT, "tenant %u: message type %d: %s",
		  tenant, m->type, m->type == WIRE_ERROR ? m->text : "");
	CHECK_MSG(m->type != WIRE_VERDICT ||
		  (m->request == 0 && m->epoch == 0 && m->verified == 1 &&
		   m->accepted == 1 && m->k == 0 &&
		   m->token == (uint32_t)r->want[pi][3]),
		  "tenant %u: verdict verified %u accepted %u k %u token %u", tenant,
		  m->verified, m->accepted, m->k, m->token);
	ok = m->type == WIRE_VERDICT;
	free(m);
	return ok;
}

/* A client of a full server gets ERROR "server full", then the close. */
static int expect_full(int port)
{
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	struct err e = { "" };
	int fd = dial(port), got = fd < 0 ? -1 : recv_msg(fd, m, &e), ok;

	CHECK_MSG(got == 1 && m->type == WIRE_ERROR &&
		  strstr(m->text, "server full"),
		  "full server: %d, type %d '%s' %s", got, m->type, m->text, e.msg);
	ok = got == 1 && expect_close(fd, "full server");
	if (fd >= 0)
		close(fd);
	free(m);
	return ok;
}

/* Clients that break the protocol get an ERROR and are cut off, one that
 * goes away mid-request frees its slot (a full server answers "server
 * full"), and the two edges running meanwhile stay lossless. Each edge
 * keeps its connection, and so its slot, until the raw clients are done,
 * so the last client can only get the slot the one gone has freed. */
static void loopback_misbehaving(void)
{
	static const struct bad_client bad[] = {
		{ "oversized frame", BAD_OVERSIZED, 0, 0, "frame of" },
		{ "block before hello", BAD_NO_HELLO, 0, 0, "before hello" },
		/* the wire's unsigned numbers said as sent */
		{ "4e9 output tokens", BAD_PROMPT, 4000000000u, 1,
		  "+ 4000000000 output tokens" },
		{ "token 2^32 - 1", BAD_PROMPT, 4, UINT32_MAX,
		  "token 4294967295 at 0 outside" },
		{ "no output tokens", BAD_PROMPT, 0, 1, "one of each at least" },
		{ "ready without start", BAD_READY, 4, 1,
		  "did not begin with START" },
		{ "a draft of another tokenizer", BAD_TOKENIZER, 0, 0,
		  "another tokenizer than this server's target" },
	};
	static struct rig r;
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	int hold[2] = { -1, -1 }, ok = 1, fd;

	if (rig_init(&r) < 0) {
		free(m);
		return;
	}
	/* 2 edges + the bad clients + the one gone mid-request + the last */
	if (start_server(&r, MB_CLIENTS, MB_EDGES + (int)NELEM(bad) + 2) < 0 ||
	    pipe(hold) < 0)
		ok = 0;
	for (uint32_t i = 0; ok && i < MB_EDGES; i++)
		ok = start_edge(&r, i, hold[0], hold[1]) == 0;
	if (hold[0] >= 0)
		close(hold[0]);
	for (size_t i = 0; ok && i < NELEM(bad); i++) {
		uint8_t frame[5];
		struct err e = { "" };
		size_t n = 5;

		if ((fd = dial(r.port)) < 0) {
			ok = 0;
			break;
		}
		if (bad[i].kind == BAD_OVERSIZED) {
			wire_put32(frame, WIRE_MAX_PAYLOAD + 1);
			frame[4] = WIRE_BLOCK;
			ok = send_bytes(fd, frame, n) == 0;
		} else if (bad[i].kind == BAD_NO_HELLO) {
			*m = (struct wire_msg){ .type = WIRE_BLOCK, .pos = E_PROMPT,
						.n = 1, .tok = { 1 } };
			ok = send_msg(fd, m) == 0;
		} else if (bad[i].kind == BAD_TOKENIZER) {
			*m = (struct wire_msg){ .type = WIRE_HELLO, .tenant = 21,
						.tokenizer = 1 };
			ok = send_msg(fd, m) == 0;
		} else {
			*m = (struct wire_msg){ .type = WIRE_HELLO, .tenant = 20 };
			ok = send_msg(fd, m) == 0;
			*m = (struct wire_msg){ .type = WIRE_PROMPT, .n = 1,
						.out_tokens = bad[i].out,
						.tok = { (int32_t)bad[i].tok0 } };
			ok = ok && send_msg(fd, m) == 0;
			*m = (struct wire_msg){ .type = WIRE_READY, .pos = 1 };
			ok = ok && (bad[i].kind != BAD_READY ||
				    send_msg(fd, m) == 0);
		}
		if (ok && recv_msg(fd, m, &e) != 1) {
			CHECK_MSG(0, "%s: no answer: %s", bad[i].what, e.msg);
			ok = 0;
		}
		if (ok) {
			CHECK_MSG(m->type == WIRE_ERROR && strstr(m->text, bad[i].want),
				  "%s: message type %d '%s', want an error with '%s'",
				  bad[i].what, m->type, m->text, bad[i].want);
			ok = expect_close(fd, bad[i].what);
		}
		close(fd);
	}
	/* mid-request: a verdict came, another block is queued, then it goes;
	 * the server closing its end shows it has dropped the client */
	if (ok && (fd = dial(r.port)) >= 0) {
		ok = raw_request(&r, fd, 10, 2 * MB_EDGES);
		/* every slot is taken now: one more is told so */
		ok = ok && expect_full(r.port);
		*m = (struct wire_msg){ .type = WIRE_BLOCK, .request = 0,
					.pos = E_PROMPT + 3, .n = 2 };
		m->tok[0] = r.want[2 * MB_EDGES][3];
		m->tok[1] = r.want[2 * MB_EDGES][4];
		ok = ok && send_msg(fd, m) == 0 && shutdown(fd, SHUT_WR) == 0 &&
		     expect_close(fd, "client gone mid-request");
		close(fd);
	} else {
		ok = 0;
	}
	/* both edges still hold their slots: only the freed one is left */
	if (ok && (fd = dial(r.port)) >= 0) {
		ok = raw_request(&r, fd, 11, 2 * MB_EDGES + 1);
		*m = (struct wire_msg){ .type = WIRE_DONE, .request = 0 };
		ok = ok && send_msg(fd, m) == 0 && shutdown(fd, SHUT_WR) == 0 &&
		     expect_close(fd, "last client");
		close(fd);
	} else {
		ok = 0;
	}
	if (hold[1] >= 0)
		close(hold[1]); /* the edges may go */
	if (!ok && r.k.n)
		kill(r.k.pid[0], SIGKILL); /* the server waits for nobody */
	if (kids_wait(&r.k, CHILD_DEADLINE_S) && ok) {
		for (uint32_t i = 0; i < MB_EDGES; i++)
			json_decref(check_edge_log(&r, i));
		/* the hello of another tokenizer is refused, not an error */
		check_server(MB_EDGES + (long long)NELEM(bad) + 2,
			     MB_EDGES * E_REQUESTS + 1, (long long)NELEM(bad) - 1);
	}
	free(m);
	rig_release(&r);
}

/* ---- validate, through the binary ---- */

static const char val_base[] =
	"{\"name\": \"tiny\", \"seed\": 1,\n"
	" \"protocol\": {\"kind\": \"async\", \"gamma\": 3, \"window\": 2},\n"
	" \"tenants\": [{\"name\": \"e\", \"count\": 2,\n"
	"   \"device\": {\"draft_base_s\": 0.0001, \"prefill_per_token_s\": 0.0001},\n"
	"   \"workload\": {\"arrival\": \"closed\", \"requests\": 1,\n"
	"     \"prompt_tokens\": 8, \"output_tokens\": 16},\n"
	"   \"acceptance\": {\"model\": \"iid\", \"alpha\": 0.8},\n"
	"   \"wan\": {\"rtt_s\": 0.004}}],\n"
	" \"cloud\": {\"policy\": \"continuous\", \"max_batch_tokens\": 32,\n"
	"   \"prefill_chunk_tokens\": 16, \"model\": \"stories260K\"}}\n";

/* A two-point sweep on stories260K: both points run for real and
 * simulated, every output is the target's greedy one, the results have a
 * row a point with both sides' figures. */
static void t_validate_small(void)
{
	char out[8192], args[2048], *doc;
	json_t *j, *pts, *p;
	size_t i;
	long long within;
	double rd[2] = { 0 };

	if (!t_need_models())
		return;
	t_absolute_dirs();
	t_write("base.json", val_base);
	t_write("sweep.json", "{\"name\": \"tiny\", \"base\": \"base.json\",\n"
		" \"grid\": {\"/protocol/kind\": [\"sync\", \"async\"]}}\n");
	/* every point runs, however slow this build drafts (the bound is
	 * tested below) */
	snprintf(args, sizeof(args), "validate %s/sweep.json -o %s/v --quick "
		 "--target stories260K --draft stories260K:w4a16 "
		 "--edge-bound 100", t_tmpdir(), t_tmpdir());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	CHECK(strstr(out, "kind=\"sync\"") && strstr(out, "kind=\"async\""));
	doc = t_slurp("v/validate.json");
	CHECK(doc != NULL);
	if (!doc)
		return;
	j = json_loads(doc, 0, NULL);
	/* the command as typed */
	CHECK_MSG(!strncmp(json_string_value(jx_at(j, "/provenance/command")),
			   "hybridspec validate ", 20) &&
		  strstr(json_string_value(jx_at(j, "/provenance/command")),
			 "--edge-bound 100"), "%s",
		  json_string_value(jx_at(j, "/provenance/command")));
	CHECK(json_array_size(json_object_get(j, "failed")) == 0);
	pts = json_object_get(j, "points");
	CHECK(json_array_size(pts) == 2);
	CHECK(json_is_integer(json_object_get(j, "points_within_10pct")));
	within = 0;
	json_array_foreach(pts, i, p) {
		json_t *real = json_object_get(p, "real"), *sim = json_object_get(p, "sim");
		double ra = json_number_value(json_object_get(real, "alpha"));
		double sa = json_number_value(json_object_get(sim, "alpha"));

		CHECK(json_is_true(json_object_get(p, "lossless")));
		CHECK(json_is_boolean(json_object_get(p, "within_10pct")));
		within += json_is_true(json_object_get(p, "within_10pct"));
		CHECK(json_integer_value(json_object_get(p, "requests")) == 2);
		CHECK(json_integer_value(json_object_get(p, "protocol_errors")) == 0);
		CHECK(ra > 0 && ra <= 1 && sa > 0 && sa <= 1);
		CHECK(json_number_value(json_object_get(real, "itl_s")) > 0);
		CHECK(json_number_value(json_object_get(sim, "itl_s")) > 0);
		CHECK(json_number_value(json_object_get(real, "tokens_per_s")) > 0);
		rd[i] = json_number_value(json_object_get(p, "retime_draft_ratio"));
		CHECK(rd[i] > 0 && isfinite(rd[i]) &&
		      json_number_value(json_object_get(p, "retime_verify_ratio")) > 0);
	}
	/* the summary counts the points' own verdicts */
	CHECK(json_integer_value(json_object_get(j, "points_within_10pct")) ==
	      within);
	/* the label, which holds quotes, is one CSV field */
	free(doc);
	doc = t_slurp("v/validate.csv");
	CHECK(doc && strstr(doc, "\n0,\"kind=\"\"sync\"\"\","));
	CHECK(t_exists("v/validate.csv") && t_exists("v/calib/verify.json") &&
	      t_exists("v/calib/edge.json") && t_exists("v/points/1/edge-1.json") &&
	      t_exists("v/points/0/accept-0.bits") &&
	      t_exists("v/points/0/config.json"));
	json_decref(j);
	free(doc);
	/* each point ran on the calibration's profiles scaled to the costs
	 * timed again before it, and its config names them */
	doc = t_slurp("v/points/1/config.json");
	CHECK(doc && strstr(doc, "points/1/retimed/edge.json") &&
	      strstr(doc, "points/1/retimed/verify.json"));
	free(doc);
	{
		char pc[PATH_MAX + 64], pr[PATH_MAX + 64];
		json_t *cal, *re;
		double a;
		double b;

		snprintf(pc, sizeof(pc), "%s/v/calib/edge.json", t_tmpdir());
		snprintf(pr, sizeof(pr), "%s/v/points/1/retimed/edge.json",
			 t_tmpdir());
		cal = jx_load(pc, &(struct err){ 0 });
		re = jx_load(pr, &(struct err){ 0 });
		a = json_number_value(jx_at(cal, "/fit/draft_base_s"));
		b = json_number_value(jx_at(re, "/fit/draft_base_s"));
		CHECK_MSG(cal && re && fabs(b - a * rd[1]) <= 1e-6 * b,
			  "retimed draft_base_s %.9g, calibrated %.9g x %.6g", b, a,
			  rd[1]);
		/* the two-token pass was timed, and scaled as the rest */
		a = json_number_value(jx_at(cal, "/fit/draft_pair_s"));
		b = json_number_value(jx_at(re, "/fit/draft_pair_s"));
		CHECK_MSG(a > 0 && fabs(b - a * rd[1]) <= 1e-6 * b,
			  "draft_pair_s %.9g retimed %.9g", a, b);
		json_decref(cal);
		json_decref(re);
	}
	{
		/* the server listed its iterations, which add up to its
		 * counters; in situ read the verifier's speed from them */
		char ps[PATH_MAX + 64];
		json_t *st, *row, *pj;
		long tok = 0;
		double busy = 0, vr;
		size_t k;

		snprintf(ps, sizeof(ps), "%s/v/points/0/server.json", t_tmpdir());
		st = jx_load(ps, &(struct err){ 0 });
		json_array_foreach(json_object_get(st, "iteration_log"), k, row) {
			tok += (long)json_integer_value(json_array_get(row, 0));
			busy += json_number_value(json_array_get(row, 3));
		}
		CHECK(st && k > 0 && k == (size_t)json_integer_value(
				json_object_get(st, "iterations")));
		CHECK(tok == json_integer_value(json_object_get(st,
							"batch_tokens")));
		CHECK(fabs(busy - json_number_value(json_object_get(st,
					"busy_s"))) < 1e-6 * busy);
		json_decref(st);
		doc = t_slurp("v/validate.json");
		j = doc ? json_loads(doc, 0, NULL) : NULL;
		pj = json_array_get(json_object_get(j, "points"), 0);
		vr = json_number_value(json_object_get(pj, "verify_ratio"));
		CHECK_MSG(vr > 0 && isfinite(vr), "verify_ratio %g", vr);
		CHECK(json_array_size(json_object_get(j, "not_run")) == 0);
		json_decref(j);
		free(doc);
	}
	{
		/* a bound of 0 leaves every point whose 2 edges share a CPU
		 * unrun, listed with its edges' demand; no deployment runs
		 * (validate gives the edges every CPU but the last) */
		cpu_set_t cs;
		size_t shared;

		CPU_ZERO(&cs);
		sched_getaffinity(0, sizeof(cs), &cs);
		/* the edges' CPUs: all but the verifier's, when there are 2 */
		shared = (CPU_COUNT(&cs) - (CPU_COUNT(&cs) >= 2)) < 2 ? 2 : 0;
		snprintf(args, sizeof(args), "validate %s/sweep.json -o %s/v0 "
			 "--quick --target stories260K --draft "
			 "stories260K:w4a16 --edge-bound 0", t_tmpdir(),
			 t_tmpdir());
		/* none ran: nothing was checked, a failure */
		CHECK_MSG(t_run(args, out, sizeof(out)) == (shared == 2), "%s",
			  out);
		CHECK_MSG(!shared || (strstr(out, "not run: its edges would keep") &&
				      strstr(out, "none of the 2 points ran")),
			  "%s", out);
		doc = t_slurp("v0/validate.json");
		j = doc ? json_loads(doc, 0, NULL) : NULL;
		CHECK(json_array_size(json_object_get(j, "points")) == 2 - shared &&
		      json_array_size(json_object_get(j, "not_run")) == shared);
		CHECK(!shared || json_number_value(jx_at(j,
				"/not_run/0/edge_demand_per_cpu")) > 0);
		CHECK(!shared || !t_exists("v0/points/0/server.json"));
		json_decref(j);
		free(doc);
	}
	{
		/* a point that fails (its deployment past --timeout-s) is
		 * recorded, its message naming the folder as it is, and the
		 * next runs; --quiet prints nothing */
		t_write("slow.json", "{\"name\": \"slow\", \"base\": "
			"\"base.json\", \"set\": {\"/tenants/0/workload/"
			"requests\": 500}, \"grid\": {\"/protocol/kind\": "
			"[\"sync\", \"async\"]}}\n");
		snprintf(args, sizeof(args), "validate %s/slow.json -o %s/vs "
			 "--quick --quiet --target stories260K --draft "
			 "stories260K:w4a16 --edge-bound 100 --timeout-s 1",
			 t_tmpdir(), t_tmpdir());
		CHECK_MSG(t_run(args, out, sizeof(out)) == 1 &&
			  strstr(out, "2 of 2 points failed") &&
			  !strstr(out, "kind="), "%s", out);
		doc = t_slurp("vs/validate.json");
		j = doc ? json_loads(doc, 0, NULL) : NULL;
		CHECK_MSG(json_array_size(json_object_get(j, "failed")) == 2 &&
			  strstr(json_string_value(jx_at(j, "/failed/1/why")),
				 "/vs/points/1: still running after 1 s") &&
			  !strstr(json_string_value(jx_at(j, "/failed/1/why")),
				  ".tmp"), "%s", doc ? doc : "no validate.json");
		json_decref(j);
		free(doc);
	}
	{
		/* SIGTERM mid-point: exit 143, the point's processes gone
		 * with it, nothing written (no folder, no temporary) */
		const char *bin = getenv("HYBRIDSPEC_BIN");
		char cmd[3 * PATH_MAX], *err, *rc_text, *left;

		snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir vi && { '%s' "
			 "validate slow.json -o vi/v --quick --quiet --target "
			 "stories260K --draft stories260K:w4a16 --edge-bound 100 "
			 "2>err & p=$!; sleep 8; kill -TERM $p; wait $p; echo $? > "
			 "rc; sleep 0.5; { command -v pgrep > /dev/null || echo no "
			 "pgrep; pgrep -f '^[^ ]*hybridspec validate slow[.]json'; "
			 "} > left; true; }",
			 t_tmpdir(), bin ? bin : "build/hybridspec");
		CHECK(system(cmd) == 0);
		rc_text = t_slurp("rc");
		err = t_slurp("err");
		left = t_slurp("left");
		CHECK_MSG(rc_text && atoi(rc_text) == 143, "exit status %s",
			  rc_text ? rc_text : "none");
		CHECK_MSG(err && strstr(err, "stopped by signal 15; nothing "
					"written"), "stderr: %s", err ? err : "");
		CHECK_MSG(left && !left[0], "processes left: %s", left ? left : "");
		snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s/vi')\"",
			 t_tmpdir());
		CHECK_MSG(system(cmd) == 0, "files left behind");
		free(rc_text);
		free(err);
		free(left);
	}
}

/* Points the deployment cannot run are refused before anything runs, with
 * the place and the reason; nothing is written. */
static void t_validate_refuses(void)
{
	static const struct {
		const char *grid, *want;
	} cases[] = {
		{ "\"/protocol/kind\": [\"sync\", \"cloud_only\"]",
		  "runs sync or async" },
		{ "\"/tenants/0/workload\": [{\"arrival\": \"poisson\", "
		  "\"rate_per_s\": 1, \"prompt_tokens\": 8, "
		  "\"output_tokens\": 16}]", "closed loops" },
		{ "\"/tenants/0/workload/output_tokens\": "
		  "[{\"dist\": \"uniform\", \"min\": 8, \"max\": 16}]",
		  "needs a constant" },
		{ "\"/cloud/policy\": [\"slo\"]", "continuous or window" },
		{ "\"/tenants/0/workload/output_tokens\": [8, 16]",
		  "same prompt and output lengths" },
	};
	char out[4096], args[2048], sweep[512];

	if (!t_need_models())
		return;
	t_absolute_dirs();
	t_write("base.json", val_base);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		snprintf(sweep, sizeof(sweep), "{\"name\": \"bad\", \"base\": "
			 "\"base.json\", \"grid\": {%s}}\n", cases[k].grid);
		t_write("bad.json", sweep);
		snprintf(args, sizeof(args), "validate %s/bad.json -o %s/out "
			 "--quick --quiet --target stories260K --draft "
			 "stories260K:w4a16", t_tmpdir(), t_tmpdir());
		CHECK_MSG(t_run(args, out, sizeof(out)) == 2, "case %zu: %s", k,
			  out);
		CHECK_MSG(strstr(out, cases[k].want), "case %zu: %s", k, out);
		CHECK(!t_exists("out"));
	}
}

static void sleep_s(double s)
{
	nanosleep(&(struct timespec){ (time_t)s,
		  (long)((s - (double)(time_t)s) * 1e9) }, NULL);
}

/* The emulated link works while the edge computes: a prompt sent before
 * 0.3 s of computing (here a sleep, netem untouched) is at the cloud when
 * the computing ends, and not before its 50 ms; a verdict the cloud writes
 * then is stamped as it comes, not when the edge next looks, so after
 * another 0.2 s of computing it is there to take. */
static void netem_works_while_edge_computes(void)
{
	struct cfg_wan w = { .rtt_s = { .kind = DIST_CONSTANT, .a = 0.1 },
			     .up_bps = 1e9, .down_bps = 1e9 };
	struct netem n;
	struct wire_conn peer;
	struct wire_msg *m = xcalloc(1, sizeof(*m)), *got = xcalloc(1, sizeof(*m));
	struct err e = { "" };
	struct pollfd p;
	int fds[2], hellos = 0, prompts = 0, r;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
	netem_init(&n, &w, 1, 0, rt_now_s());
	*m = (struct wire_msg){ .type = WIRE_HELLO };
	CHECK(netem_attach(&n, fds[0], m, &e) == 0);
	wire_conn_init(&peer, fds[1]);
	*m = (struct wire_msg){ .type = WIRE_PROMPT, .request = 7, .n = 1,
				.out_tokens = 4 };
	netem_send(&n, m);
	sleep_s(0.02);
	p = (struct pollfd){ .fd = fds[1], .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 1); /* the hello, undelayed */
	wire_conn_read(&peer, &e);
	while ((r = wire_conn_next(&peer, got, &e)) == 1) /* the prompt not yet */
		hellos += got->type == WIRE_HELLO ? 1 : 100;
	CHECK_MSG(hellos == 1 && r == 0, "at 20 ms: %d", hellos);
	sleep_s(0.28);
	CHECK(wire_conn_read(&peer, &e) == 1);
	while ((r = wire_conn_next(&peer, got, &e)) == 1)
		prompts += got->type == WIRE_PROMPT && got->request == 7;
	CHECK_MSG(prompts == 1, "%d prompts at 0.3 s", prompts);
	*m = (struct wire_msg){ .type = WIRE_VERDICT, .request = 7, .verified = 1,
				.token = 5 };
	CHECK(wire_conn_send(&peer, m, &e) == 0);
	sleep_s(0.2);
	CHECK(netem_take(&n, got, &e) == 1 && got->type == WIRE_VERDICT &&
	      got->token == 5);
	CHECK(netem_take(&n, got, &e) == 0);
	CHECK(netem_flushed(&n));
	wire_conn_release(&peer); /* the cloud is gone: the edge hears of it */
	netem_wait(&n, rt_now_s() - n.t0_s + 5);
	CHECK(netem_take(&n, got, &e) == NETEM_LOST);
	netem_release(&n);
	free(m);
	free(got);
}

/* Two stop signals at once (as `timeout` sends them, to serve and then
 * its group) cut the drain short: exit 0 and the stats written (the
 * second had met the default handler, 143, the stats lost). */
static void serve_signals(void)
{
	const char *bin = getenv("HYBRIDSPEC_BIN");
	char cmd[3 * PATH_MAX], *rc, *err;

	if (!t_need_models())
		return;
	t_absolute_dirs();
	snprintf(cmd, sizeof(cmd), "cd '%s' && { '%s' serve --port 0 --model "
		 "stories260K --stats st.json 2>err & p=$!; sleep 0.5; "
		 "kill -TERM $p; kill -TERM $p; wait $p; echo $? > rc; }",
		 t_tmpdir(), bin ? bin : "build/hybridspec");
	CHECK(system(cmd) == 0);
	rc = t_slurp("rc");
	err = t_slurp("err");
	CHECK_MSG(rc && atoi(rc) == 0 && t_exists("st.json"), "exit status "
		  "%s, stats %s: %s", rc ? rc : "?", t_exists("st.json") ?
		  "written" : "missing", err ? err : "");
	free(rc);
	free(err);
}

const struct tcase deploy_tests[] = {
	{ "deploy: serve's stop signals leave its stats", serve_signals },
	{ "deploy: the emulated link works while the edge computes",
	  netem_works_while_edge_computes },
	{ "deploy: validate runs a small sweep both ways", t_validate_small },
	{ "deploy: validate refuses points it cannot run", t_validate_refuses },
	{ "deploy: wire round trip and prefixes", wire_round_trip },
	{ "deploy: wire rejects malformed frames", wire_rejects },
	{ "deploy: a paged verifier preempts and recomputes, losslessly",
	  verifier_paged },
	{ "deploy: verifier verdicts, epochs and protocol errors",
	  verifier_protocol },
	{ "deploy: loopback edges are lossless", loopback_lossless },
	{ "deploy: a hand-back: the cloud decodes the rest, lossless",
	  loopback_handback },
	{ "deploy: the verifier takes a hand-back and decodes the rest",
	  verifier_hands_back },
	{ "deploy: a ping is answered at once", loopback_ping },
	{ "deploy: an edge refuses bad verdicts, a foreign tokenizer's named",
	  edge_bad_verdicts },
	{ "deploy: loopback misbehaving clients and freed slots",
	  loopback_misbehaving },
	{ 0 },
};
