/* eq.h: the event queue, the heart of the discrete-event engine.
 *
 * Events are ordered by (time, priority, insertion sequence): equal times run
 * by priority (lower first), then first-in first-out. Push and pop are O(1)
 * amortised in the usual case (O(log n) when times bunch up); a pushed event
 * can be cancelled through its handle, a posted one (most) cannot and costs
 * less. Events name entities by index (id, arg), never by pointer. */
#ifndef HS_EQ_H
#define HS_EQ_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct eq_event {
	uint32_t kind; /* what happens; the simulator's switch dispatches on it */
	uint32_t id;   /* the entity it happens to (tenant, replica, ...) */
	uint64_t arg;  /* a second index or a small value */
};

struct eq_node {
	uint64_t t_bits;    /* the bits of time t >= 0, which order as t does */
	uint64_t ord;       /* prio << 58 | seq << 24 | slot */
	struct eq_event ev;
};

struct eq_vec {
	struct eq_node *v; /* (cap) owned */
	size_t n, cap;
};

/* n nodes in a chain of chunks of the queue's arena (eq.c) */
struct eq_list {
	uint32_t head, tail, n;
};

#define EQ_CHUNK 8 /* nodes a chunk */

struct eq {
	/* near future: every event whose bucket index is below heap_end, in
	 * the sorted run and the heap; then buckets heap_end..n_buckets-1
	 * unsorted; then far */
	struct eq_vec run;      /* sorted; run.v[run_pos..run.n) pending */
	size_t run_pos;
	uint32_t *scratch;      /* (scratch_cap) owned: the run's sort's */
	size_t scratch_cap;
	struct eq_node *heap;   /* (cap) 4-ary min-heap, n in use */
	void *heap_mem;         /* owned: the allocation heap points into */
	size_t n, cap;
	struct eq_list *bucket; /* (buckets_cap) owned, n_buckets in use */
	uint32_t n_buckets, buckets_cap, heap_end;
	struct eq_list far;     /* beyond the last bucket */
	/* the arena of the buckets' and far's chunks */
	struct eq_node *chunk;  /* (chunks_cap x EQ_CHUNK) owned */
	uint32_t *chunk_next;   /* (chunks_cap) the next chunk of a chain */
	uint32_t chunks_cap, free_chunk; /* free chunks chain from free_chunk */
	double base_s;          /* where bucket 0 starts */
	double inv_width_s;     /* 1 / a bucket's width: the bucket of t is
				   max(0, floor((t - base_s) x inv_width_s)) */
	size_t n_total;         /* nodes in run, heap, buckets and far */
	size_t n_cancelled;     /* nodes whose event was cancelled */
	/* slots: a pending event's identity for eq_cancel */
	uint32_t *slot_state;   /* (slots_cap) generation << 1 | cancelled;
				   the generation is bumped when the slot is
				   freed */
	uint32_t *free_stack;   /* (slots_cap) free slots, n_free on top */
	uint32_t nslots, slots_cap, n_free;
	uint64_t seq;           /* next insertion sequence, < 2^34 */
	double now_s;           /* time of the last popped event */
};

/* eq_node.ord: prio << (EQ_SEQ_BITS + EQ_SLOT_BITS) | seq << EQ_SLOT_BITS |
 * slot */
#define EQ_SLOT_BITS 24
#define EQ_SEQ_BITS 34
#define EQ_SLOT_MASK ((UINT64_C(1) << EQ_SLOT_BITS) - 1)
#define EQ_NO_SLOT EQ_SLOT_MASK /* a posted node's slot */

#define EQ_PRIO_MAX 63
/* events pending at once: the slots in use are fewer, so below EQ_NO_SLOT */
#define EQ_PENDING_MAX ((uint32_t)EQ_NO_SLOT)
#define EQ_NONE UINT64_C(0) /* never a valid handle */

void eq_init(struct eq *q);
void eq_release(struct eq *q);

/* Removes a pending event. Returns false if the handle's event already ran
 * or was cancelled (a handle never names a later event by accident). */
bool eq_cancel(struct eq *q, uint64_t handle);

/* eq_push, eq_post and eq_pop are inline below for their usual cases;
 * eq.c's *_rest do every other. */
uint64_t eq_push_rest(struct eq *q, double t_s, int prio, struct eq_event ev);
void eq_post_rest(struct eq *q, double t_s, int prio, struct eq_event ev);
bool eq_pop_rest(struct eq *q, double *t_s, struct eq_event *ev);

/* The helpers eq.c and the inline steps share (not for callers). */

/* The order of nodes: (time, priority, sequence) as one 128-bit key; times
 * are >= 0, whose bits order as they do. */
static inline bool eq_node_lt(const struct eq_node *a, const struct eq_node *b)
{
	return ((unsigned __int128)a->t_bits << 64 | a->ord) <
	       ((unsigned __int128)b->t_bits << 64 | b->ord);
}

/* Makes *x a new node: the next sequence, slot s (EQ_NO_SLOT: posted);
 * t_s >= 0. */
static inline void eq_node_set(struct eq *q, struct eq_node *x, double t_s,
			       int prio, struct eq_event ev, uint32_t s)
{
	t_s += 0.0; /* -0.0 becomes +0.0 */
	memcpy(&x->t_bits, &t_s, sizeof(t_s));
	x->ord = (uint64_t)prio << (EQ_SEQ_BITS + EQ_SLOT_BITS) |
		 q->seq++ << EQ_SLOT_BITS | s;
	x->ev = ev;
}

/* Frees slot s of a popped node: clears its cancelled bit, bumps its
 * generation, and puts it on the free stack. */
static inline void eq_slot_free(struct eq *q, uint32_t s)
{
	q->slot_state[s] = (q->slot_state[s] | 1) + 1;
	q->free_stack[q->n_free++] = s;
}

/* The usual placing of a node with slot s, inline: in range, and into a
 * bucket or far (not the near future) whose last chunk has room; false
 * (nothing done) otherwise. */
static inline bool eq_place_usual(struct eq *q, double t_s, int prio,
				  struct eq_event ev, uint32_t s)
{
	double b = (t_s - q->base_s) * q->inv_width_s;
	struct eq_list *l;
	struct eq_node *x;
	uint32_t fill;

	if (!(b >= (double)q->heap_end && t_s >= q->now_s &&
	      t_s < (double)INFINITY && prio >= 0 && prio <= EQ_PRIO_MAX &&
	      q->seq < UINT64_C(1) << EQ_SEQ_BITS &&
	      q->n_total < EQ_PENDING_MAX))
		return false;
	/* (int32_t)b: floor(b), as in eq.c's route */
	l = b < (double)q->n_buckets ? &q->bucket[(int32_t)b] : &q->far;
	fill = l->n % EQ_CHUNK;
	if (!fill)
		return false;
	x = &q->chunk[(size_t)l->tail * EQ_CHUNK + fill];
	eq_node_set(q, x, t_s, prio, ev, s);
	l->n++;
	q->n_total++;
	return true;
}

/* Schedules ev at t_s (>= now_s: scheduling in the past is a bug and aborts)
 * with priority prio in [0, EQ_PRIO_MAX]. Returns a handle for eq_cancel.
 * Inline when a slot is free and the node's place is the usual one. */
static inline uint64_t eq_push(struct eq *q, double t_s, int prio,
			       struct eq_event ev)
{
	uint32_t s;

	if (!q->n_free ||
	    !eq_place_usual(q, t_s, prio, ev, q->free_stack[q->n_free - 1]))
		return eq_push_rest(q, t_s, prio, ev);
	s = q->free_stack[--q->n_free];
	return ((uint64_t)(q->slot_state[s] >> 1) << EQ_SLOT_BITS | s) + 1;
}

/* Schedules ev as eq_push does, for an event nobody cancels: no handle, so
 * no slot is taken for it and given back. Inline in the usual case. */
static inline void eq_post(struct eq *q, double t_s, int prio,
			   struct eq_event ev)
{
	if (!eq_place_usual(q, t_s, prio, ev, EQ_NO_SLOT))
		eq_post_rest(q, t_s, prio, ev);
}

/* Takes the earliest event; advances now_s to its time. Returns false when
 * the queue is empty. Inline for the usual case, which the simulator's
 * loop meets at most events: the sorted run's head comes before the heap's
 * top and was posted, or holds a slot and was not cancelled. */
static inline bool eq_pop(struct eq *q, double *t_s, struct eq_event *ev)
{
	const struct eq_node *x;
	uint32_t s;

	if (q->run_pos >= q->run.n)
		return eq_pop_rest(q, t_s, ev);
	x = q->run.v + q->run_pos;
	s = (uint32_t)(x->ord & EQ_SLOT_MASK);
	if ((q->n && eq_node_lt(q->heap, x)) ||
	    (s != EQ_NO_SLOT && (q->slot_state[s] & 1)))
		return eq_pop_rest(q, t_s, ev);
	if (s != EQ_NO_SLOT)
		eq_slot_free(q, s);
	q->run_pos++;
	q->n_total--;
	memcpy(t_s, &x->t_bits, sizeof(*t_s));
	q->now_s = *t_s;
	*ev = x->ev;
	return true;
}

/* The k-th event of the sorted run after the next pop's, a hint of what
 * comes soon (for prefetching); NULL when the run has fewer. An event pushed
 * into the near future may come first, and a cancelled one is not skipped. */
static inline const struct eq_event *eq_upcoming(const struct eq *q,
						 size_t k)
{
	return q->run_pos + k < q->run.n ? &q->run.v[q->run_pos + k].ev : NULL;
}

/* Pending events (cancelled ones not counted). */
static inline size_t eq_size(const struct eq *q)
{
	return q->n_total - q->n_cancelled;
}

#endif
