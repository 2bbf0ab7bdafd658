/* edge.c: the edge's protocol machine around a draft model.
 *
 * seq[0 .. dlen) is the request's text as the edge sees it: committed
 * tokens seq[0 .. L), then its own drafts not yet judged (L <= dlen: a
 * token the cloud decodes moves both). Of the drafts,
 * the blocks in flight are fly[0 .. nfly) (sizes, oldest first) starting at
 * L, and the block being drafted is seq[bstart .. dlen). The draft model's
 * KV cache holds positions 0 .. dkv (dkv < dlen: the newest token is fed
 * when the next one is drafted). Every time is seconds from o->t0_s.
 * lost_s >= 0 while the cloud is lost: since when, with no verdict since;
 * backoff_s is the next dial's mean wait. quiet_s is when the link last
 * carried a message either way: an edge that waits for the cloud takes it
 * as lost o->silence_s after. The connection and the emulated
 * WAN are net's thread's (deploy/netem.h): the edge hands it what it sends
 * and takes the verdicts that have arrived between its forward passes.
 *
 * A hand-back (o->handback): once decided (handing_back) no block is
 * drafted and the one being drafted is dropped; when none is in flight
 * BACK goes up (back) and the cloud's TOKENs commit the rest.
 *
 * An edge_proc holds what the program's edge_run borrows (the draft and
 * its tokenizer, the secret, each request's copy of the prompt), so it is
 * set up in place and released only after edge_run has returned. */
#include "edge.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adapt.h"
#include "rt.h"
#include "dist.h"
#include "hback.h"
#include "mload.h"
#include "rng.h"
#include "spec.h"
#include "netem.h"
#include "serve.h"
#include "wire.h"
#include "mem.h"

#define EDGE_FEED_BLOCK 32 /* tokens fed at once (prompt prefill) */
#define RETRY_FIRST_S 0.05 /* the first wait between dials */
#define RETRY_MAX_S 2.0    /* the longest; each wait is 0.5-1.5 x the mean */
#define LOST (-2)          /* pump: the cloud is gone, dial again */
#define PING_WARM 3        /* pings not counted: the connection warms */
#define PING_BPS 1e15      /* the ping's link: no serialisation to speak of */

struct edge {
	const struct edge_opts *o;
	struct netem net;           /* the connection and the emulated WAN */
	gsl_rng *r;                 /* think and start draws */
	gsl_rng *backoff_r;         /* the dials' jitter */
	struct llama_state st;
	float *logits;              /* (vocab): the last token fed's */
	int *seq;                   /* (seq_len) */
	int L, dlen, dkv, limit, bstart, bsize;
	int *fly, nfly;             /* (window) */
	double *fly_s;              /* (window) when each was sent */
	struct cfg_protocol pr;     /* the protocol, for adapt_choose */
	int32_t gamma, window;      /* the next block's; o's unless adaptive */
	struct adapt_est est;
	long blocks, reconnects, resumed;
	double lost_s, backoff_s;
	double quiet_s;             /* the last message sent or taken */
	bool prompted;              /* this connection's cloud knows the
				       request (L < limit: one is open) */
	bool prompt_owed;           /* the open request's prompt text, printed
				       with its first committed tokens (not
				       before the cloud has answered) */
	bool starting;              /* a handover start: the cloud decodes */
	bool ready_sent;            /* READY went up on this connection */
	double prefilled_s, ready_s; /* this request's handover start: when
					its prefill ended, when the last
					READY reaches the cloud (-1: none) */
	long handovers, cloud_tokens;
	bool handing_back, back;    /* a hand-back decided, BACK sent */
	struct hb_est hb;           /* this request's verdicts (hback.h) */
	long handbacks, back_tokens;
	uint32_t req, epoch;
	long drafted, wasted, judged, accepted, verdicts;
	double draft_s;             /* wall time spent drafting */
	long pair_passes;           /* passes that fed two tokens ... */
	double pair_pass_s;         /* ... and their wall time */
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
	e->quiet_s = now_s(e);
	return netem_send(&e->net, e->msg);
}

/* Writes tokens seq[from .. to) to the text: decoded, else their ids. */
static void put_text(const struct edge *e, int from, int to)
{
	const struct edge_opts *o = e->o;

	for (int i = from; i < to; i++) {
		if (o->tk)
			fputs(tok_decode(o->tk, i ? e->seq[i - 1] : -1, e->seq[i]),
			      o->text);
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
	if (e->prompt_owed) { /* text and a tokenizer */
		put_text(e, e->o->tk->add_bos ? 1 : 0, e->o->prompt_n);
		e->prompt_owed = false;
	}
	if (e->o->text)
		put_text(e, from, e->L);
}

/* The drafts from position to on are gone, and the draft's cache past
 * them. */
static void cut_drafts(struct edge *e, int to)
{
	e->dlen = to;
	if (e->dkv > to - 1)
		e->dkv = to - 1;
}

/* Drafting starts again after the committed tokens: the blocks in flight
 * and the one being drafted are gone. */
static void restart_drafts(struct edge *e)
{
	e->bstart = e->L;
	cut_drafts(e, e->L);
	e->nfly = 0;
}

/* At a verdict (for the oldest block in flight): hback.h's estimate and
 * rule, at the edge's acceptance and mean draft step so far; a hand-back
 * drops the block being drafted (BACK goes up from request's loop). */
static void decide_back(struct edge *e)
{
	const struct edge_opts *o = e->o;
	double rtt;

	if (!o->handback || e->handing_back || !e->nfly)
		return;
	rtt = dist_mean(cfg_wan_rtt(o->wan, now_s(e)));
	hb_observe(&e->hb, now_s(e) - e->fly_s[0], rtt);
	if (!e->drafted || !e->judged ||
	    !hb_faster(&e->hb, (double)e->accepted / (double)e->judged,
		       e->gamma, e->pr.caps.windowed ? e->window : 1,
		       e->draft_s / (double)e->drafted, rtt))
		return;
	e->handing_back = true;
	e->wasted += e->dlen - e->bstart;
	cut_drafts(e, e->bstart);
}

/* A token from the cloud past the draft's vocabulary: the target and the
 * draft do not share one tokenizer. */
static int vocab_mismatch(const struct edge *e, const struct wire_msg *m,
			  struct err *er)
{
	return err_set(er, "the cloud sent token %u, past the draft's vocabulary "
		       "of %d: its target and this draft do not share a "
		       "tokenizer (serve --model, edge --draft)", m->token,
		       e->o->m->c.vocab);
}

static int verdict(struct edge *e, const struct wire_msg *m, struct err *er)
{
	int from = e->L, fly0 = e->nfly;

	if (m->request != e->req || m->epoch != e->epoch || !m->verified ||
	    m->verified > (uint32_t)e->nfly || m->accepted > m->verified ||
	    m->verified - m->accepted > 1)
		return err_set(er, "verdict (request %u, epoch %u, %u blocks "
			       "judged, %u accepted) that does not match request "
			       "%u, epoch %u and %d blocks in flight", m->request,
			       m->epoch, m->verified, m->accepted, e->req,
			       e->epoch, e->nfly);
	if (m->token >= (uint32_t)e->o->m->c.vocab)
		return vocab_mismatch(e, m, er);
	e->verdicts++;
	e->lost_s = -1;
	e->backoff_s = RETRY_FIRST_S;
	decide_back(e);
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
		restart_drafts(e);
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

/* A token the cloud decoded in a handover start or after a hand-back:
 * committed; a handover start's last hands the request to the edge. */
static int token(struct edge *e, const struct wire_msg *m, struct err *er)
{
	bool open = e->starting || e->back;

	if (!open || m->request != e->req || m->pos != (uint32_t)e->L ||
	    e->L >= e->limit)
		return err_set(er, "token that does not match request %u at "
			       "position %d%s", e->req, e->L, open ? "" :
			       " (no handover start or hand-back open)");
	if (m->token >= (uint32_t)e->o->m->c.vocab)
		return vocab_mismatch(e, m, er);
	if (m->last && !e->starting)
		return err_set(er, "token of request %u flagged the last, after a "
			       "hand-back (only a handover start's last is)",
			       e->req);
	e->lost_s = -1;
	e->backoff_s = RETRY_FIRST_S;
	e->seq[e->L++] = (int)m->token;
	e->dlen = e->bstart = e->L; /* none drafted while the cloud decodes */
	if (e->back)
		e->back_tokens++;
	else
		e->cloud_tokens++;
	commit(e, e->L - 1);
	if (m->last) {
		e->starting = false;
		e->handovers++;
	}
	return 0;
}

/* Handles the verdicts that have reached the edge. LOST (er says how)
 * when the connection is gone or the cloud says to come back later; -1
 * when the cloud breaks the protocol or refuses the edge. */
static int pump(struct edge *e, struct err *er)
{
	struct wire_msg m;
	int r;

	while ((r = netem_take(&e->net, &m, er)) == 1) {
		e->quiet_s = now_s(e);
		if (m.type == WIRE_PONG) /* netem passes them for edge_ping */
			return err_set(er, "the cloud answered a ping (%u) this "
				       "edge did not send", m.request);
		if ((m.type == WIRE_TOKEN ? token(e, &m, er)
					  : verdict(e, &m, er)) < 0)
			return -1;
	}
	return r == NETEM_LOST ? LOST : r;
}

/* Waits for a verdict to reach the edge, at most until until_s; a
 * spinning edge does not wait (its caller polls again). */
static void wait_io(struct edge *e, double until_s)
{
	if (!e->o->spin)
		netem_wait(&e->net, until_s);
}

/* Feeds seq[dkv .. upto) to the draft model; where want, the logits of
 * the last are left in e->logits' first row and returned (NULL: nothing
 * fed, or not wanted). */
static const float *feed(struct edge *e, int upto, bool want)
{
	float *row = NULL;

	while (e->dkv < upto) {
		int n = upto - e->dkv;

		if (n > EDGE_FEED_BLOCK)
			n = EDGE_FEED_BLOCK;
		row = want && e->dkv + n == upto ? e->logits : NULL;
		llama_forward_last(e->o->m, &e->st, e->seq + e->dkv, n, e->dkv,
				   row);
		e->dkv += n;
	}
	return row;
}

static void draft(struct edge *e)
{
	const struct edge_opts *o = e->o;
	double t0 = rt_now_s(), t1;
	int fed = e->dlen - e->dkv;
	const float *row = feed(e, e->dlen, true);

	if (e->dlen == e->bstart)
		e->bsize = e->gamma < e->limit - e->dlen ? e->gamma :
			   e->limit - e->dlen;
	e->seq[e->dlen++] = spec_argmax(row, o->m->c.vocab);
	e->drafted++;
	t1 = rt_now_s();
	e->draft_s += t1 - t0;
	if (fed == 2) { /* the bonus token with the last draft */
		e->pair_passes++;
		e->pair_pass_s += t1 - t0;
	}
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

/* Sends the open request's committed tokens as its prompt, for the
 * output tokens still to come (for the cloud to decode itself first in a
 * handover start). */
static int send_prompt(struct edge *e, struct err *er)
{
	struct wire_msg *m = e->msg;

	if (e->L > WIRE_MAX_TOKENS)
		return err_set(er, "cannot resume request %u: %d committed "
			       "tokens, a prompt takes at most %d", e->req, e->L,
			       WIRE_MAX_TOKENS);
	*m = (struct wire_msg){ .type = e->starting || e->back ? WIRE_START :
				WIRE_PROMPT,
				.request = e->req,
				.out_tokens = (uint32_t)(e->limit - e->L),
				.n = (uint32_t)e->L };
	for (int i = 0; i < e->L; i++)
		m->tok[i] = e->seq[i];
	send_up(e);
	e->prompted = true;
	return 0;
}

/* Takes fd as the connection to the cloud and says hello on it. */
static int hello(struct edge *e, int fd, struct err *er)
{
	*e->msg = (struct wire_msg){ .type = WIRE_HELLO, .tenant = e->o->tenant,
				     .tokenizer = e->o->tokenizer };
	if (e->o->secret)
		memcpy(e->msg->secret, e->o->secret, WIRE_SECRET_BYTES);
	e->quiet_s = now_s(e);
	return netem_attach(&e->net, fd, e->msg, er);
}

/* Dials host:port until it answers, then says hello; pause: the cloud
 * was lost again with no verdict since (it answered a dial, then not the
 * edge), so the edge waits before its first dial too. Each wait is a
 * jittered, doubling backoff, the last cut to end as retry_s have passed
 * since the cloud was lost, when the edge dials a last time and then
 * gives up: -1 with er's message (why the cloud was lost, and the last
 * dial's failure). */
static int dial_cloud(struct edge *e, bool pause, struct err *er)
{
	const struct edge_opts *o = e->o;
	struct err de = { "" };
	int fd = -1, tries = 0;

	while (fd < 0) {
		if (pause) {
			double wait = e->backoff_s *
				      (0.5 + gsl_rng_uniform(e->backoff_r));
			double left = e->lost_s + o->retry_s - now_s(e);
			char why[sizeof(er->msg)];

			if (left <= 0) {
				snprintf(why, sizeof(why), "%s", er->msg);
				if (!tries)
					return err_set(er, "%s; gave up %.1f s after "
						       "the cloud was lost", why,
						       now_s(e) - e->lost_s);
				return err_set(er, "%s; gave up %.1f s after the "
					       "cloud was lost, after %d failed "
					       "dials: %s", why, now_s(e) - e->lost_s,
					       tries, de.msg);
			}
			wait = fmin(wait, left);
			nanosleep(&(struct timespec){ (time_t)wait,
				  (long)((wait - floor(wait)) * 1e9) }, NULL);
			e->backoff_s = fmin(2 * e->backoff_s, RETRY_MAX_S);
		}
		if ((fd = wire_dial(o->host, o->port, &de)) < 0)
			tries++;
		pause = true;
	}
	return hello(e, fd, er);
}

/* The cloud was lost at since_s (er says how): unless the edge may not
 * dial again, forgets the connection and what was in flight on it, dials
 * again and resumes the open request. */
static int reconnect(struct edge *e, double since_s, struct err *er)
{
	const bool again = e->lost_s >= 0;

	if (!e->o->host || e->o->retry_s <= 0)
		return -1;
	if (!again)
		e->lost_s = since_s;
	netem_detach(&e->net);
	e->wasted += e->dlen - e->L;
	restart_drafts(e);
	e->epoch = 0;
	e->prompted = e->ready_sent = false;
	e->hb = (struct hb_est){ 0 }; /* its next verdict waits for a prefill */
	if (dial_cloud(e, again, er) < 0)
		return -1;
	e->reconnects++;
	if (e->L >= e->limit) { /* between requests, or its last verdict came:
				   nothing is owed, the dial answered */
		e->lost_s = -1;
		e->backoff_s = RETRY_FIRST_S;
		return 0;
	}
	e->resumed += e->L - e->o->prompt_n;
	return send_prompt(e, er);
}

/* pump, dialling again when the cloud is lost. */
static int step(struct edge *e, struct err *er)
{
	int r = pump(e, er);

	return r == LOST ? reconnect(e, now_s(e), er) : r;
}

/* Waits for the cloud, which owes the edge a verdict or a token, or has
 * yet to take what was sent; after o->silence_s of silence both ways
 * (0: never) the cloud is lost, and the edge dials again. A connected
 * cloud is waited for however long it queues the request: retry_s bounds
 * the dialling after a loss (a cloud dialled again that is silent again
 * is lost again, with no verdict since, and its dials spend what is left
 * of retry_s), never the wait on a connection. */
static int await(struct edge *e, struct err *er)
{
	const struct edge_opts *o = e->o;
	const double until = o->silence_s > 0 ? e->quiet_s + o->silence_s
					      : INFINITY;

	if (now_s(e) < until) {
		wait_io(e, until);
		return 0;
	}
	err_set(er, "the cloud sent nothing for %.1f s (request %u; blocks "
		"in flight: %d%s)", now_s(e) - e->quiet_s, e->req, e->nfly,
		e->starting ? ", a handover start" : "");
	/* lost since the silence began, not since it was noticed */
	return reconnect(e, e->quiet_s, er);
}

/* A handover start, once the prompt is sent: the edge prefills it, then
 * catches up on the tokens the cloud streamed down meanwhile, as long as
 * each catch-up is shorter than the one before; READY goes up (again
 * after a reconnection), and the edge waits for the cloud's last token.
 * Drafting then starts after it (the catch-up's rest fed with the first
 * draft). */
static int start(struct edge *e, struct err *er)
{
	int backlog = INT_MAX;

	feed(e, e->o->prompt_n - 1, false);
	e->prefilled_s = now_s(e);
	for (;;) {
		int n;

		if (step(e, er) < 0)
			return -1;
		if (!e->starting || e->L >= e->limit)
			break;
		n = e->L - 1 - e->dkv;
		if (!e->ready_sent && n > 0 && n < backlog) {
			backlog = n;
			feed(e, e->L - 1, false);
			continue;
		}
		if (!e->ready_sent) {
			*e->msg = (struct wire_msg){ .type = WIRE_READY,
				.request = e->req, .pos = (uint32_t)e->dkv + 1 };
			e->ready_s = send_up(e);
			e->ready_sent = true;
		}
		if (await(e, er) < 0)
			return -1;
	}
	e->starting = false;
	restart_drafts(e); /* none in flight yet: drafting starts at L */
	return 0;
}

/* The hand-back's BACK, nothing in flight: the cloud decodes from L on;
 * after a reconnection START says as much. */
static void send_back(struct edge *e)
{
	*e->msg = (struct wire_msg){ .type = WIRE_BACK, .request = e->req,
				     .pos = (uint32_t)e->L };
	send_up(e);
	e->back = true;
	e->handbacks++;
}

static int request(struct edge *e, const int *prompt, json_t *log,
		   struct err *er)
{
	const struct edge_opts *o = e->o;
	struct wire_msg *m = e->msg;
	json_t *rq, *toks;

	for (int i = 0; i < o->prompt_n; i++)
		e->seq[i] = prompt[i];
	e->L = e->dlen = e->bstart = o->prompt_n;
	e->limit = o->prompt_n + o->out_n;
	e->dkv = 0;
	e->nfly = 0;
	e->epoch = 0;
	e->commits = json_array();
	rq = json_pack("{s:f, s:o}", "arrive_s", now_s(e), "commits", e->commits);
	json_array_append_new(log, rq);
	e->starting = o->handover;
	e->ready_sent = false;
	e->ready_s = -1;
	e->handing_back = e->back = false;
	e->hb = (struct hb_est){ 0 };
	if (send_prompt(e, er) < 0)
		return -1;
	/* the prompt, then the tokens as they commit */
	e->prompt_owed = o->text && o->tk;
	if (!o->handover)
		feed(e, o->prompt_n - 1, false); /* the edge's prefill */
	else if (start(e, er) < 0)
		return -1;
	else
		json_object_set_new(rq, "start", json_pack("{s:f,s:o}",
				    "prefilled_s", e->prefilled_s, "ready_arrive_s",
				    e->ready_s >= 0 ? json_real(e->ready_s) :
				    json_null()));
	while (e->L < e->limit) {
		if (step(e, er) < 0)
			return -1;
		if (e->L >= e->limit)
			break;
		if (e->handing_back && !e->back && !e->nfly)
			send_back(e);
		if (!e->handing_back && e->nfly < e->window && e->dlen < e->limit)
			draft(e);
		else if (await(e, er) < 0)
			return -1;
	}
	/* a cloud that never heard of it (lost as the last verdict came) is
	 * not told it is done */
	*m = (struct wire_msg){ .type = WIRE_DONE, .request = e->req };
	json_object_set_new(rq, "done_arrive_s", json_real(e->prompted ?
			    send_up(e) : now_s(e)));
	e->prompted = false;
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
		if (step(e, er) < 0)
			return -1;
		if (until_s >= 0 ? now_s(e) >= until_s :
		    netem_flushed(&e->net))
			return 0;
		if (until_s >= 0)
			wait_io(e, until_s);
		else if (await(e, er) < 0)
			return -1;
	}
}

json_t *edge_run(const struct edge_opts *o, struct err *er)
{
	struct edge e = { .o = o, .msg = xmalloc(sizeof(struct wire_msg)),
			  .lost_s = -1,
			  .backoff_s = RETRY_FIRST_S };
	json_t *reqs = json_array(), *log = NULL;
	int rc = 0;

	HS_ASSERT((o->fd >= 0 || o->host) && o->prompt_n >= 1 &&
		  o->out_n >= 1 && o->gamma >= 1 &&
		  o->window >= 1 && o->prompt_n + o->out_n <= o->m->c.seq_len);
	netem_init(&e.net, o->wan, o->seed, o->tenant, o->t0_s);
	e.r = rng_new(o->seed, rng_stream_id("edge %u", o->tenant));
	e.backoff_r = rng_new(o->seed, rng_stream_id("backoff %u", o->tenant));
	llama_state_init(&e.st, &o->m->c, EDGE_FEED_BLOCK);
	e.logits = xmalloc(sizeof(float) * (size_t)o->m->c.vocab);
	e.seq = xcalloc((size_t)o->m->c.seq_len, sizeof(int));
	e.fly = xcalloc((size_t)o->window, sizeof(int));
	e.fly_s = xcalloc((size_t)o->window, sizeof(double));
	e.pr = (struct cfg_protocol){ .kind = o->proto,
		.caps = *cfg_proto_caps(o->proto), .gamma = o->gamma,
		.window = o->window, .adapt = o->adapt };
	e.gamma = o->gamma;
	e.window = o->window;
	if (o->fd >= 0) {
		rc = hello(&e, o->fd, er);
	} else {
		e.lost_s = now_s(&e);
		err_set(er, "no connection to the cloud");
		if ((rc = dial_cloud(&e, false, er)) == 0)
			e.lost_s = -1; /* found: a later loss starts the count */
	}
	for (int r = 0; rc == 0 && r < o->requests; r++) {
		double start = r ? now_s(&e) + dist_sample(&o->think_s, e.r) :
				   dist_sample(&o->start_s, e.r);

		if (o->stop_s > 0 && start >= o->stop_s)
			break;
		if (idle(&e, fmax(start, 0), er) < 0 ||
		    request(&e, o->prompts + (size_t)r * o->prompt_n, reqs, er) < 0)
			rc = -1;
	}
	if (rc == 0)
		rc = idle(&e, -1, er);
	if (rc == 0)
		log = json_pack("{s:I, s:O, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, "
				"s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
				"s:I}",
				"tenant", (json_int_t)o->tenant, "requests", reqs,
				"drafted", (json_int_t)e.drafted,
				"wasted", (json_int_t)e.wasted,
				"judged", (json_int_t)e.judged,
				"accepted", (json_int_t)e.accepted,
				"verdicts", (json_int_t)e.verdicts,
				"bytes_up", (json_int_t)netem_bytes(&e.net, true),
				"bytes_down", (json_int_t)netem_bytes(&e.net, false),
				"draft_s", e.draft_s,
				"pair_passes", (json_int_t)e.pair_passes,
				"pair_pass_s", e.pair_pass_s,
				"blocks", (json_int_t)e.blocks,
				"handovers", (json_int_t)e.handovers,
				"cloud_tokens", (json_int_t)e.cloud_tokens,
				"handbacks", (json_int_t)e.handbacks,
				"back_tokens", (json_int_t)e.back_tokens,
				"reconnects", (json_int_t)e.reconnects,
				"resumed_tokens", (json_int_t)e.resumed,
				"lost_messages", (json_int_t)netem_losses(&e.net));
	json_decref(reqs);
	free(e.msg);
	free(e.fly);
	free(e.fly_s);
	free(e.seq);
	free(e.logits);
	llama_state_release(&e.st);
	rng_free(e.r);
	rng_free(e.backoff_r);
	netem_release(&e.net);
	return log;
}

int edge_ping(int fd, uint32_t tenant, const uint8_t *secret, double rtt_s,
	      int n, bool spin, double *over_s, struct err *e)
{
	struct cfg_wan w = { .rtt_s = dist_constant(rtt_s), .up_bps = PING_BPS,
			     .down_bps = PING_BPS };
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	struct netem net;
	double sum = 0;
	int r = 0;

	HS_ASSERT(n > 0 && rtt_s >= 0);
	netem_init(&net, &w, 0, tenant, rt_now_s());
	*m = (struct wire_msg){ .type = WIRE_HELLO, .tenant = tenant };
	if (secret)
		memcpy(m->secret, secret, WIRE_SECRET_BYTES);
	if (netem_attach(&net, fd, m, e) < 0)
		r = -1;
	for (int i = 0; i < PING_WARM + n && r == 0; i++) {
		double t = rt_now_s();

		*m = (struct wire_msg){ .type = WIRE_PING, .request = (uint32_t)i };
		netem_send(&net, m);
		while ((r = netem_take(&net, m, e)) == 0 &&
		       rt_now_s() - t < EDGE_SILENCE_S)
			if (!spin)
				netem_wait(&net, t - net.t0_s + EDGE_SILENCE_S);
		if (r == 0) {
			r = err_set(e, "ping %d: no answer in %.0f s", i,
				    EDGE_SILENCE_S);
		} else if (r != 1) {
			err_prefix(e, "ping %d", i);
			r = -1;
		} else if (m->type != WIRE_PONG || m->request != (uint32_t)i) {
			r = err_set(e, "ping %d answered with message type %d "
				    "for %u", i, m->type, m->request);
		} else {
			r = 0;
			if (i >= PING_WARM)
				sum += rt_now_s() - t - rtt_s;
		}
	}
	netem_release(&net);
	free(m);
	*over_s = sum / n;
	return r;
}

/* p's prompts: s->o.requests copies of s->prompt encoded; -1 with e's
 * message when a request would not fit the draft's context. */
static int proc_prompts(struct edge_proc *p, const struct edge_setup *s,
			struct err *e)
{
	int *one = xmalloc(sizeof(int) * (strlen(s->prompt) + 3));
	int np = tok_encode(&p->t, s->prompt, 1, 0, one);

	if (np + s->o.out_n > p->m.c.seq_len) {
		free(one);
		return err_set(e, "%d prompt + %d tokens: the model's context is %d",
			       np, s->o.out_n, p->m.c.seq_len);
	}
	p->prompts = xmalloc(sizeof(int) * (size_t)np * (size_t)s->o.requests);
	for (int r = 0; r < s->o.requests; r++)
		memcpy(p->prompts + (size_t)r * np, one, sizeof(int) * (size_t)np);
	free(one);
	p->o.prompts = p->prompts;
	p->o.prompt_n = np;
	return 0;
}

int edge_proc_init(struct edge_proc *p, const struct edge_setup *s,
		   struct err *e)
{
	struct quant q;
	int have;

	*p = (struct edge_proc){ .o = s->o };
	if ((have = serve_secret(s->token_file, p->secret, e)) < 0 ||
	    mload_spec(s->draft, "w4a16", &p->m, &p->t, &q, e) < 0)
		return -1;
	if (proc_prompts(p, s, e) < 0) {
		tok_release(&p->t);
		llama_release(&p->m);
		return -1;
	}
	p->o.m = &p->m;
	p->o.tk = s->ids ? NULL : &p->t;
	p->o.tokenizer = tok_fingerprint(&p->t);
	p->o.fd = -1;
	p->o.secret = have ? p->secret : NULL;
	p->o.window = cfg_proto_caps(s->o.proto)->windowed ? s->o.window : 1;
	/* adaptive: its bounds and weight as a config's defaults */
	p->o.adapt = s->adaptive ? (struct cfg_adapt){ true, 1, 16, 0.05 }
				 : (struct cfg_adapt){ 0 };
	p->o.start_s = dist_constant(0);
	p->o.t0_s = rt_now_s();
	return 0;
}

void edge_proc_release(struct edge_proc *p)
{
	free(p->prompts);
	tok_release(&p->t);
	llama_release(&p->m);
}
