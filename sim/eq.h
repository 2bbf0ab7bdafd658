/* eq.h: the event queue, the heart of the discrete-event engine.
 *
 * Events are ordered by (time, priority, insertion sequence): equal times run
 * by priority (lower first), then first-in first-out. Push and pop are
 * O(log n) amortised (O(1) push and a small heap's pop in the usual case); a
 * pushed event can be cancelled through its handle. Events name entities by
 * index (id, arg), never by pointer. */
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
	uint64_t ord;       /* prio << 58 | seq << 24 | slot; the payload is
			       the slot's (eq.payload) */
};

struct eq_vec {
	struct eq_node *v; /* (cap) owned */
	size_t n, cap;
};

struct eq {
	/* near future: a heap of every event whose bucket index is below
	 * heap_end; then buckets heap_end..n_buckets-1 unsorted; then far */
	struct eq_node *heap;   /* (cap) 4-ary min-heap, n in use */
	void *heap_mem;         /* owned: the allocation heap points into */
	size_t n, cap;
	struct eq_vec *bucket;  /* (buckets_cap) owned, n_buckets in use */
	size_t n_buckets, buckets_cap, heap_end;
	struct eq_vec far;      /* beyond the last bucket */
	double base_s, width_s; /* buckets start at base_s, width_s wide */
	double inv_width_s;     /* 1 / width_s: the bucket of t is
				   floor((t - base_s) x inv_width_s) */
	size_t n_total;         /* nodes in heap, buckets and far */
	size_t n_cancelled;     /* nodes whose event was cancelled */
	/* slots: a pending event's identity for eq_cancel, and its payload */
	struct eq_event *payload; /* (slots_cap) the event of the slot */
	uint32_t *slot_gen;     /* (slots_cap) bumped when the slot is freed */
	uint64_t *cancelled;    /* (slots_cap bits) its event was cancelled */
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

/* Removes a pending event. Returns false if the handle's event already ran
 * or was cancelled (a handle never names a later event by accident). */
bool eq_cancel(struct eq *q, uint64_t handle);

/* Takes the earliest event; advances now_s to its time. Returns false when
 * the queue is empty. */
bool eq_pop(struct eq *q, double *t_s, struct eq_event *ev);

/* Pending events (cancelled ones not counted). */
static inline size_t eq_size(const struct eq *q)
{
	return q->n_total - q->n_cancelled;
}

#endif
