/* trace.c: the trace's JSON. Every event but the first is preceded by
 * ",\n", so that the array stays valid whatever comes last; the names are
 * JSON strings: a track's name (made from a group's name, any string) is
 * escaped here; span names and args are the simulator's own. */
#include "trace.h"

#include <stdarg.h>

static const char *const kind_names[] = { "", "edge", "uplink", "downlink",
					  "cloud queue", "GPU" };

static void sep(struct trace *t)
{
	fputs(",\n", t->f);
}

void trace_begin(struct trace *t, FILE *f)
{
	*t = (struct trace){ .f = f, .max_spans = 2000000 };
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
	for (int k = TRACE_EDGE; k <= TRACE_GPU; k++)
		fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
			"\"args\":{\"name\":\"%s\"}}", k > TRACE_EDGE ? ",\n" : "",
			k, kind_names[k]);
}

void trace_name(struct trace *t, enum trace_kind k, uint32_t track,
		const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	sep(t);
	fprintf(t->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
		"\"tid\":%u,\"args\":{\"name\":\"", (int)k, track);
	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		if (*c < 0x20)
			fprintf(t->f, "\\u%04x", *c);
		else if (*c == '"' || *c == '\\')
			fprintf(t->f, "\\%c", *c);
		else
			fputc(*c, t->f);
	}
	fputs("\"}}", t->f);
}

void trace_span(struct trace *t, enum trace_kind k, uint32_t track,
		const char *name, double t0_s, double t1_s,
		const char *args_fmt, long a, long b)
{
	sep(t);
	fprintf(t->f, "{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,"
		"\"ts\":%.3f,\"dur\":%.3f", name, (int)k, track, t0_s * 1e6,
		(t1_s - t0_s) * 1e6);
	if (args_fmt) {
		fputs(",\"args\":{", t->f);
		fprintf(t->f, args_fmt, a, b);
		fputc('}', t->f);
	}
	fputc('}', t->f);
	t->spans++;
}

void trace_end(struct trace *t)
{
	fputs("\n]}\n", t->f);
}
