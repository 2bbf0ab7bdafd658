/* ring.h: a growing FIFO ring of values of one type.
 *
 * RING_DEFINE(name, type) defines struct name { type *v; uint32_t head, n,
 * cap; } and static inline name_push, name_push_front, name_at, name_pop
 * and name_release.
 * The ring holds n values from v[head], wrapping at cap, a power of two
 * (or 0 before the first push), so a position is (head + i) & (cap - 1);
 * a push into a full ring doubles it, keeping the order. A zeroed struct is
 * an empty ring; name_release frees it and leaves it empty. */
#ifndef HS_RING_H
#define HS_RING_H

#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "mem.h"

#define RING_DEFINE(name, type)                                               \
	struct name {                                                         \
		type *v; /* (cap) owned */                                    \
		uint32_t head, n, cap;                                        \
	};                                                                    \
                                                                              \
	/* room for one more value */                                        \
	static inline void name##_room(struct name *r)                       \
	{                                                                     \
		if (r->n == r->cap) {                                         \
			uint32_t cap = r->cap ? 2 * r->cap : 8;               \
			type *v = xmalloc(cap * sizeof(*v));                  \
                                                                              \
			for (uint32_t i = 0; i < r->n; i++)                   \
				v[i] = r->v[(r->head + i) & (r->cap - 1)];    \
			free(r->v);                                           \
			r->v = v;                                             \
			r->head = 0;                                          \
			r->cap = cap;                                         \
		}                                                             \
	}                                                                     \
                                                                              \
	static inline void name##_push(struct name *r, type x)               \
	{                                                                     \
		name##_room(r);                                               \
		r->v[(r->head + r->n++) & (r->cap - 1)] = x;                  \
	}                                                                     \
                                                                              \
	/* x becomes the oldest value */                                     \
	static inline void name##_push_front(struct name *r, type x)         \
	{                                                                     \
		name##_room(r);                                               \
		r->head = (r->head - 1) & (r->cap - 1);                       \
		r->v[r->head] = x;                                            \
		r->n++;                                                       \
	}                                                                     \
                                                                              \
	/* the i-th oldest value, i < n; borrowed until the next push */     \
	static inline type *name##_at(const struct name *r, uint32_t i)      \
	{                                                                     \
		return &r->v[(r->head + i) & (r->cap - 1)];                   \
	}                                                                     \
                                                                              \
	/* takes the oldest value; the ring must not be empty */             \
	static inline type name##_pop(struct name *r)                        \
	{                                                                     \
		type x;                                                       \
                                                                              \
		HS_ASSERT(r->n > 0);                                          \
		x = r->v[r->head];                                            \
		r->head = (r->head + 1) & (r->cap - 1);                       \
		r->n--;                                                       \
		return x;                                                     \
	}                                                                     \
                                                                              \
	static inline void name##_release(struct name *r)                    \
	{                                                                     \
		free(r->v);                                                   \
		*r = (struct name){ 0 };                                      \
	}

#endif
