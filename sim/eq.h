/* eq.h: the event queue, the heart of the discrete-event engine.
 *
 * Events are ordered by (time, priority, insertion sequence): equal times run
 * by priority (lower first), then first-in first-out. Push and pop are O(1)
 * amortised in the usual case (O(log n) when times bunch up); a pushed event
 * can be cancelled through its handle, a posted one (most) cannot and costs
 * less. Events name entities by index (id, arg), never by pointer. */
#ifndef HS_EQ_H
#define HS_EQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#define EQ_PRIO_MAX 63
#define EQ_PENDING_MAX ((1u << 24) - 1) /* events pending at once */
#define EQ_NONE UINT64_C(0) /* never a valid handle */

void eq_init(struct eq *q);
void eq_release(struct eq *q);

/* Schedules ev at t_s (>= now_s: scheduling in the past is a bug and aborts)
 * with priority prio in [0, EQ_PRIO_MAX]. Returns a handle for eq_cancel. */
uint64_t eq_push(struct eq *q, double t_s, int prio, struct eq_event ev);

/* Schedules ev as eq_push does, for an event nobody cancels: no handle, so
 * no slot is taken for it and given back. */
void eq_post(struct eq *q, double t_s, int prio, struct eq_event ev);

/* Removes a pending event. Returns false if the handle's event already ran
 * or was cancelled (a handle never names a later event by accident). */
bool eq_cancel(struct eq *q, uint64_t handle);

/* Takes the earliest event; advances now_s to its time. Returns false when
 * the queue is empty. */
bool eq_pop(struct eq *q, double *t_s, struct eq_event *ev);

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
