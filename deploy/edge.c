/* edge.c: the edge's protocol machine around a draft model.
 *
 * seq[0 .. dlen) is the request's text as the edge sees it: committed
 * tokens seq[0 .. L), then its own drafts not yet judged. Of the drafts,
 * the blocks in flight are fly[0 .. nfly) (sizes, oldest first) starting at
 * L, and the block being drafted is seq[bstart .. dlen). The draft model's
 * KV cache holds positions 0 .. dkv (dkv < dlen: the newest token is fed
 * when the next one is drafted). Every time is seconds from o->t0_s. */
#include "edge.h"

#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "adapt.h"
#include "rt.h"
#include "dist.h"
#include "rng.h"
#include "spec.h"
#include "wan.h"
#include "wire.h"
#include "mem.h"

#define EDGE_FEED_BLOCK 32 /* tokens fed at once (prompt prefill) */

struct edge {
	const struct edge_opts *o;
	struct wire_conn c;
	struct wan_line up, down;
	gsl_rng *r;                 /* think and start draws */
	struct llama_state st;
	float *logits;              /* (EDGE_FEED_BLOCK x vocab) */
	int *seq;                   /* (seq_len) */
	int L, dlen, dkv, limit, bstart, bsize;
	int *fly, nfly;             /* (window) */
	double *fly_s;              /* (window) when each was sent */
	struct cfg_protocol pr;     /* the protocol, for adapt_choose */
	int32_t gamma, window;      /* the next block's; o's unless adaptive */
	struct adapt_est est;
	long blocks;
	uint32_t req, epoch;
	long drafted, wasted, judged, accepted, verdicts;
	double draft_s;             /* wall time spent drafting */
	json_t *commits;            /* borrowed from the log: this request's */
	struct wire_msg *msg;       /* scratch for the messages sent */
};

static double now_s(const struct edge *e)
{
	return rt_now_s() - e->o->t0_s;
}

/* Sends e->msg up the link; returns its arrival time at the cloud. */
static double send_up(struct edge *e)
{
	return wan_line_push(&e->up, now_s(e), e->msg);
}

/* Writes tokens seq[from .. to) to the text: decoded, else their ids. */
static void put_text(const struct edge *e, int from, int to)
{
	const struct edge_opts *o = e->o;

	for (int i = from; i < to; i++) {
		if (o->tk)
			fputs(tok_decode(o->tk, e->seq[i - 1], e->seq[i]), o->text);
		else
			fprintf(o->text, " %d", e->seq[i]);
	}
	fflush(o->text);
}

/* Appends committed tokens seq[from .. L) to the log and the text. */
static void commit(struct edge *e, int from)
{
	if (e->L <= from)
		return;
	json_array_append_new(e->commits, json_pack("[f, i]", now_s(e),
						    e->L - from));
	if (e->o->text)
		put_text(e, from, e->L);
}

static int verdict(struct edge *e, const struct wire_msg *m, struct err *er)
{
	int from = e->L, fly0 = e->nfly;

	if (m->request != e->req || m->epoch != e->epoch ||
	    m->verified > (uint32_t)e->nfly || m->accepted > m->verified ||
	    m->verified - m->accepted > 1 || m->token >= (uint32_t)e->o->m->c.vocab)
		return err_set(er, "verdict that does not match request %u, epoch "
			       "%u and %d blocks in flight", e->req, e->epoch,
			       e->nfly);
	e->verdicts++;
	if (e->pr.adapt.on) {
		double judged = 0, accepted = 0;

		for (uint32_t b = 0; b < m->accepted; b++) {
			judged += e->fly[b];
			accepted += e->fly[b];
		}
		if (m->verified > m->accepted) {
			judged += m->k + 1;
			accepted += m->k;
		}
		adapt_observe(&e->est, e->pr.adapt.weight, judged, accepted,
			      now_s(e) - e->fly_s[0]);
		adapt_choose(&e->pr, &e->est, e->draft_s / (double)e->drafted,
			     &e->gamma, &e->window);
	}
	for (uint32_t b = 0; b < m->accepted; b++) {
		e->L += e->fly[b];
		e->judged += e->fly[b];
		e->accepted += e->fly[b];
	}
	if (m->verified > m->accepted) {
		/* rejected: k accepted, the target's correction, the rest of
		 * the epoch's drafts wasted */
		if (m->k >= (uint32_t)e->fly[m->accepted])
			return err_set(er, "verdict rejects at %u of a block of %d",
				       m->k, e->fly[m->accepted]);
		e->L += (int)m->k;
		e->judged += m->k + 1;
		e->accepted += m->k;
		e->wasted += e->dlen - e->L;
		e->seq[e->L++] = (int)m->token;
		e->dlen = e->bstart = e->L;
		if (e->dkv > e->L - 1)
			e->dkv = e->L - 1;
		e->nfly = 0;
		e->epoch++;
	} else {
		memmove(e->fly, e->fly + m->accepted,
			sizeof(int) * (size_t)(fly0 - (int)m->accepted));
		memmove(e->fly_s, e->fly_s + m->accepted,
			sizeof(double) * (size_t)(fly0 - (int)m->accepted));
		e->nfly -= (int)m->accepted;
		/* nothing in flight or being drafted: take the bonus token */
		if (!e->nfly && e->dlen == e->L && e->L < e->limit) {
			e->seq[e->L++] = (int)m->token;
			e->dlen = e->bstart = e->L;
		}
	}
	commit(e, from);
	return 0;
}

/* Moves due uplink messages to the socket, reads the socket into the
 * downlink, handles due verdicts. */
static int pump(struct edge *e, struct err *er)
{
	struct wire_msg *m, in;
	double now = now_s(e);
	int r;

	while ((m = wan_line_pop(&e->up, now))) {
		r = wire_conn_send(&e->c, m, er);
		free(m);
		if (r < 0)
			return -1;
	}
	if (wire_conn_read(&e->c, er) < 0)
		return err_prefix(er, "cloud");
	while ((r = wire_conn_next(&e->c, &in, er)) == 1) {
		if (in.type == WIRE_ERROR)
			return err_set(er, "cloud: %s", in.text);
		if (in.type != WIRE_VERDICT)
			return err_set(er, "cloud sent message type %d", in.type);
		wan_line_push(&e->down, now, &in);
	}
	if (r < 0)
		return err_prefix(er, "cloud");
	while ((m = wan_line_pop(&e->down, now))) {
		r = verdict(e, m, er);
		free(m);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Waits for the socket or the next due message, at most until until_s. */
static void wait_io(struct edge *e, double until_s)
{
	struct pollfd p = { .fd = e->c.fd, .events = POLLIN };
	double due = fmin(until_s, fmin(wan_line_next_s(&e->up),
					wan_line_next_s(&e->down)));

	if (e->c.out_len)
		p.events |= POLLOUT;
	wire_poll(&p, 1, due == INFINITY ? -1 : fmax(0, due - now_s(e)));
	if (p.revents & POLLOUT)
		wire_conn_flush(&e->c, &(struct err){ 0 });
}

/* Feeds seq[dkv .. upto) to the draft model; the logits of the last are
 * left in the last row fed. Returns that row. */
static const float *feed(struct edge *e, int upto)
{
	const float *row = NULL;
	int vocab = e->o->m->c.vocab;

	while (e->dkv < upto) {
		int n = upto - e->dkv;

		if (n > EDGE_FEED_BLOCK)
			n = EDGE_FEED_BLOCK;
		llama_forward(e->o->m, &e->st, e->seq + e->dkv, n, e->dkv,
			      e->logits);
		row = e->logits + (size_t)(n - 1) * vocab;
		e->dkv += n;
	}
	return row;
}

static void draft(struct edge *e)
{
	const struct edge_opts *o = e->o;
	double t0 = rt_now_s();
	const float *row = feed(e, e->dlen);

	if (e->dlen == e->bstart)
		e->bsize = e->gamma < e->limit - e->dlen ? e->gamma :
			   e->limit - e->dlen;
	e->seq[e->dlen++] = spec_argmax(row, o->m->c.vocab);
	e->drafted++;
	e->draft_s += rt_now_s() - t0;
	if (e->dlen - e->bstart < e->bsize)
		return;
	*e->msg = (struct wire_msg){ .type = WIRE_BLOCK, .request = e->req,
				     .epoch = e->epoch,
				     .pos = (uint32_t)e->bstart,
				     .n = (uint32_t)e->bsize };
	for (int i = 0; i < e->bsize; i++)
		e->msg->tok[i] = e->seq[e->bstart + i];
	send_up(e);
	e->blocks++;
	e->fly_s[e->nfly] = now_s(e);
	e->fly[e->nfly++] = e->bsize;
	e->bstart = e->dlen;
}

static int request(struct edge *e, const int *prompt, json_t *log,
		   struct err *er)
{
	const struct edge_opts *o = e->o;
	struct wire_msg *m = e->msg;
	json_t *rq, *toks;

	*m = (struct wire_msg){ .type = WIRE_PROMPT, .request = e->req,
				.out_tokens = (uint32_t)o->out_n,
				.n = (uint32_t)o->prompt_n };
	for (int i = 0; i < o->prompt_n; i++)
		m->tok[i] = e->seq[i] = prompt[i];
	e->commits = json_array();
	rq = json_pack("{s:f, s:o}", "arrive_s", now_s(e), "commits", e->commits);
	json_array_append_new(log, rq);
	send_up(e);
	if (o->text && o->tk) /* the prompt, then the tokens as they commit */
		put_text(e, 1, o->prompt_n);
	e->L = e->dlen = e->bstart = o->prompt_n;
	e->limit = o->prompt_n + o->out_n;
	e->dkv = 0;
	e->nfly = 0;
	e->epoch = 0;
	feed(e, o->prompt_n - 1); /* the edge's prefill */
	while (e->L < e->limit) {
		if (pump(e, er) < 0)
			return -1;
		if (e->L >= e->limit)
			break;
		if (e->nfly < e->window && e->dlen < e->limit)
			draft(e);
		else
			wait_io(e, INFINITY);
	}
	*m = (struct wire_msg){ .type = WIRE_DONE, .request = e->req };
	json_object_set_new(rq, "done_arrive_s", json_real(send_up(e)));
	toks = json_array();
	for (int i = o->prompt_n; i < e->limit; i++)
		json_array_append_new(toks, json_integer(e->seq[i]));
	json_object_set_new(rq, "tokens", toks);
	if (o->text)
		fputc('\n', o->text);
	e->req++;
	return 0;
}

/* Pumps until until_s (think time), or until the uplink is empty and
 * written (until_s < 0). */
static int idle(struct edge *e, double until_s, struct err *er)
{
	for (;;) {
		if (pump(e, er) < 0)
			return -1;
		if (until_s >= 0 ? now_s(e) >= until_s :
		    !link_peek(&e->up.link) && !e->c.out_len)
			return 0;
		wait_io(e, until_s >= 0 ? until_s : INFINITY);
	}
}

json_t *edge_run(const struct edge_opts *o, struct err *er)
{
	struct edge e = { .o = o, .msg = xmalloc(sizeof(struct wire_msg)) };
	json_t *reqs = json_array(), *log = NULL;
	int rc = 0;

	HS_ASSERT(o->prompt_n >= 1 && o->out_n >= 1 && o->gamma >= 1 &&
		  o->window >= 1 && o->prompt_n + o->out_n <= o->m->c.seq_len);
	wire_conn_init(&e.c, o->fd);
	wan_line_init(&e.up, o->wan, true, o->seed, rng_stream_id("up %u", o->tenant));
	wan_line_init(&e.down, o->wan, false, o->seed,
		      rng_stream_id("down %u", o->tenant));
	e.r = rng_new(o->seed, rng_stream_id("edge %u", o->tenant));
	llama_state_init(&e.st, &o->m->c, EDGE_FEED_BLOCK);
	e.logits = xmalloc(sizeof(float) * EDGE_FEED_BLOCK * o->m->c.vocab);
	e.seq = xcalloc((size_t)o->m->c.seq_len, sizeof(int));
	e.fly = xcalloc((size_t)o->window, sizeof(int));
	e.fly_s = xcalloc((size_t)o->window, sizeof(double));
	e.pr = (struct cfg_protocol){ .kind = o->proto,
		.caps = *cfg_proto_caps(o->proto), .gamma = o->gamma,
		.window = o->window, .adapt = o->adapt };
	e.gamma = o->gamma;
	e.window = o->window;
	*e.msg = (struct wire_msg){ .type = WIRE_HELLO, .tenant = o->tenant };
	if (wire_conn_send(&e.c, e.msg, er) < 0)
		rc = -1;
	for (int r = 0; rc == 0 && r < o->requests; r++) {
		double start = r ? now_s(&e) + dist_sample(&o->think_s, e.r) :
				   dist_sample(&o->start_s, e.r);

		if (idle(&e, fmax(start, 0), er) < 0 ||
		    request(&e, o->prompts + (size_t)r * o->prompt_n, reqs, er) < 0)
			rc = -1;
	}
	if (rc == 0)
		rc = idle(&e, -1, er);
	if (rc == 0)
		log = json_pack("{s:I, s:O, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, "
				"s:I}",
				"tenant", (json_int_t)o->tenant, "requests", reqs,
				"drafted", (json_int_t)e.drafted,
				"wasted", (json_int_t)e.wasted,
				"judged", (json_int_t)e.judged,
				"accepted", (json_int_t)e.accepted,
				"verdicts", (json_int_t)e.verdicts,
				"bytes_up", (json_int_t)e.up.link.bytes,
				"bytes_down", (json_int_t)e.down.link.bytes,
				"draft_s", e.draft_s, "blocks", (json_int_t)e.blocks);
	json_decref(reqs);
	free(e.msg);
	free(e.fly);
	free(e.fly_s);
	free(e.seq);
	free(e.logits);
	llama_state_release(&e.st);
	rng_free(e.r);
	wan_line_release(&e.up);
	wan_line_release(&e.down);
	wire_conn_release(&e.c);
	return log;
}
