/* test_traces.c: arrival traces in every format of sim/workload.c: each
 * read by its header's names (auto-detected), dates made relative, times
 * in ms made seconds, failures skipped and counted, replay speed, and
 * every bad row named by file, line and column. */
#include "harness.h"
#include "fs.h"

#include "cfg.h"
#include "workload.h"

#include <string.h>

static void azure(void)
{
	struct wl_trace t;
	struct err e;
	const char *p = t_write("azure.csv",
		"TIMESTAMP,ContextTokens,GeneratedTokens\n"
		"2023-11-16 18:15:46.6805900,374,44\n"
		"2023-11-16 18:15:47.1805900,396,109\n"
		"2023-11-16 18:16:01.0000000,879,20\n");

	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, NULL, &e) == 0, "%s", e.msg);
	CHECK(t.n == 3 && !strcmp(t.format, "azure"));
	if (t.n == 3) {
		CHECK_NEAR(t.rows[0].arrive_s, 0, 1e-9);
		CHECK_NEAR(t.rows[1].arrive_s, 0.5, 1e-6);
		CHECK_NEAR(t.rows[2].arrive_s, 14.31941, 1e-6);
		CHECK(t.rows[2].prompt == 879 && t.rows[2].output == 20);
	}
	wl_trace_release(&t);
	/* twice as fast */
	CHECK(wl_trace_load(&t, p, "azure", 2, NULL, &e) == 0 && t.n == 3 &&
	      fabs(t.rows[1].arrive_s - 0.25) < 1e-6);
	wl_trace_release(&t);
	p = t_write("azure-bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
		    "2023-11-16 18:15:46,374,44\n16/11/2023 18:15,396,109\n");
	CHECK(wl_trace_load(&t, p, "auto", 1, NULL, &e) < 0 &&
	      strstr(e.msg, "azure-bad.csv:3: TIMESTAMP: expected a date and "
		     "time YYYY-MM-DD HH:MM:SS[.fraction], got \"16/11/2023"));
}

static void burstgpt(void)
{
	struct wl_trace t;
	struct err e;
	const char *p = t_write("burst.csv",
		"Timestamp,Model,Request tokens,Response tokens,Total tokens,"
		"Log Type\n"
		"5,ChatGPT,472,18,490,Conversation log\n"
		"45,ChatGPT,1087,0,1087,Conversation log\n"
		"118,GPT-4,417,276,693,API log\n");

	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, NULL, &e) == 0, "%s", e.msg);
	CHECK(t.n == 2 && t.skipped == 1 && !strcmp(t.format, "burstgpt"));
	if (t.n == 2)
		CHECK(t.rows[0].arrive_s == 5 && t.rows[1].arrive_s == 118 &&
		      t.rows[1].prompt == 417 && t.rows[1].output == 276);
	wl_trace_release(&t);
	p = t_write("burst-cols.csv", "Timestamp,Model,Response tokens\n"
		    "5,ChatGPT,18\n");
	CHECK(wl_trace_load(&t, p, "burstgpt", 1, NULL, &e) < 0 &&
	      strstr(e.msg, "burst-cols.csv:1: expected a column \"Request "
		     "tokens\" in the header"));
}

static void mooncake(void)
{
	struct wl_trace t;
	struct err e;
	const char *p = t_write("moon.jsonl",
		"{\"timestamp\": 0, \"input_length\": 6955, \"output_length\": 52,"
		" \"hash_ids\": [46, 47]}\n"
		"{\"timestamp\": 27482, \"input_length\": 6472, "
		"\"output_length\": 26, \"hash_ids\": [46]}\n");

	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, NULL, &e) == 0, "%s", e.msg);
	CHECK(t.n == 2 && !strcmp(t.format, "mooncake") &&
	      fabs(t.rows[1].arrive_s - 27.482) < 1e-9 &&
	      t.rows[0].prompt == 6955);
	wl_trace_release(&t);
	p = t_write("moon-bad.jsonl", "{\"timestamp\": 0, \"input_length\": 5, "
		    "\"output_length\": 1}\n{\"timestamp\": 1, \"input_length\": 5}\n");
	CHECK(wl_trace_load(&t, p, "auto", 1, NULL, &e) < 0 &&
	      strstr(e.msg, "moon-bad.jsonl:2: /output_length: expected a whole "
		     "number of tokens >= 1, got nothing"));
}

/* The project's CSV: unsorted times are an error, not moved. */
/* The CSV's user column: a user's requests go to one tenant (user u to
 * tenant u mod count, users numbered as they first come), in time order;
 * without it row i goes to tenant i mod count; every row has a user or
 * none does. */
static void users(void)
{
	struct wl_trace t;
	struct err e;
	const char *p = t_write("users.csv",
		"arrival_s,prompt_tokens,output_tokens,user\n"
		"0.0,10,5,alice\n0.5,11,5,bob\n1.0,12,5,alice\n"
		"1.5,13,5,carol\n2.0,14,5,bob\n2.5,15,5,alice\n");

	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, NULL, &e) == 0, "%s", e.msg);
	CHECK(t.n == 6 && t.users == 3);
	wl_trace_assign(&t, 2);
	/* tenant 0: alice (0) and carol (2); tenant 1: bob (1) */
	CHECK(wl_trace_row(&t, 0, 0)->prompt == 10 &&
	      wl_trace_row(&t, 0, 1)->prompt == 12 &&
	      wl_trace_row(&t, 0, 2)->prompt == 13 &&
	      wl_trace_row(&t, 0, 3)->prompt == 15 && !wl_trace_row(&t, 0, 4));
	CHECK(wl_trace_row(&t, 1, 0)->prompt == 11 &&
	      wl_trace_row(&t, 1, 1)->prompt == 14 && !wl_trace_row(&t, 1, 2));
	wl_trace_release(&t);
	p = t_write("rows.csv", "0,10,5\n1,11,5\n2,12,5\n");
	CHECK(wl_trace_load(&t, p, "csv", 1, NULL, &e) == 0 && t.users == 0);
	wl_trace_assign(&t, 2);
	CHECK(wl_trace_row(&t, 0, 1)->prompt == 12 &&
	      wl_trace_row(&t, 1, 0)->prompt == 11 && !wl_trace_row(&t, 1, 1));
	wl_trace_release(&t);
	p = t_write("mixed.csv", "0,10,5,alice\n1,11,5\n");
	CHECK(wl_trace_load(&t, p, "csv", 1, NULL, &e) < 0 &&
	      strstr(e.msg, "mixed.csv:2: user: expected a user, as every row "
		     "has"));
	/* a fifth field, a hex time */
	p = t_write("five.csv", "0,10,5,alice,more\n");
	CHECK_MSG(wl_trace_load(&t, p, "csv", 1, NULL, &e) < 0 &&
		  strstr(e.msg, "five.csv:1: expected at most four fields"),
		  "%s", e.msg);
	p = t_write("hex.csv", "0x10,10,5\n");
	CHECK_MSG(wl_trace_load(&t, p, "csv", 1, NULL, &e) < 0 &&
		  strstr(e.msg, "hex.csv:1: arrival_s: expected a time >= 0, got "
			 "\"0x10\""), "%s", e.msg);
}

/* ShareGPT: each conversation's first question and answer, counted in a
 * named tokenizer's tokens, arriving at a Poisson rate from the seed;
 * without a tokenizer or a rate it says what to give. */
static void sharegpt(void)
{
	struct wl_trace t, t2;
	struct err e;
	const char *p = t_write("sg.json",
		"[{\"id\": \"a\", \"conversations\": [{\"from\": \"human\", "
		"\"value\": \"Once upon a time\"}, {\"from\": \"gpt\", "
		"\"value\": \"there was a little girl named Lily.\"}]},\n"
		" {\"id\": \"b\", \"conversations\": [{\"from\": \"human\", "
		"\"value\": \"Hello\"}]},\n"
		" {\"id\": \"c\", \"conversations\": [{\"from\": \"system\", "
		"\"value\": \"x\"}, {\"from\": \"human\", \"value\": \"Tom had "
		"a dog\"}, {\"from\": \"gpt\", \"value\": \"The dog was big\"}]}]");
	struct wl_text text = { "stories260K", 2, 7 };

	CHECK(wl_trace_load(&t, p, "auto", 1, NULL, &e) < 0 &&
	      strstr(e.msg, "give the workload's trace_tokenizer"));
	if (!t_need_models())
		return;
	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, &text, &e) == 0, "%s", e.msg);
	CHECK(!strcmp(t.format, "sharegpt") && t.n == 2 && t.skipped == 1);
	if (t.n == 2) {
		/* the question starts a document: its start token counts */
		CHECK(t.rows[0].prompt >= 4 && t.rows[0].output >= 8 &&
		      t.rows[1].prompt >= 4);
		CHECK(t.rows[0].arrive_s > 0 &&
		      t.rows[1].arrive_s > t.rows[0].arrive_s);
	}
	/* the same seed, the same arrivals; another, others */
	CHECK(wl_trace_load(&t2, p, "sharegpt", 1, &text, &e) == 0 &&
	      t2.n == 2 && t2.rows[1].arrive_s == t.rows[1].arrive_s);
	wl_trace_release(&t2);
	text.seed = 8;
	CHECK(wl_trace_load(&t2, p, "sharegpt", 1, &text, &e) == 0 &&
	      t2.n == 2 && t2.rows[1].arrive_s != t.rows[1].arrive_s);
	wl_trace_release(&t2);
	wl_trace_release(&t);
}

static void unsorted(void)
{
	struct wl_trace t;
	struct err e;
	const char *p = t_write("a.csv", "# a comment before the header\n"
				"arrival_s,prompt_tokens,output_tokens\n"
				"0.5,10,10\n2.0,10,10\n1.0,10,10\n");

	/* the row named by its line; the header after a comment taken */
	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, NULL, &e) < 0 &&
		  strstr(e.msg, "a.csv:5: expected an arrival time >= the one "
			 "before (2 s), got 1 s: sort the trace"),
		  "%s", e.msg);
	/* two times a unit in the last place apart, told apart */
	p = t_write("b.csv", "arrival_s,prompt_tokens,output_tokens\n"
		    "1,64,32\n1.0000000000000002,64,32\n1,64,32\n");
	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, NULL, &e) < 0 &&
		  strstr(e.msg, "b.csv:4: expected an arrival time >= the one "
			 "before (1.0000000000000002 s), got 1 s"), "%s", e.msg);
	/* a time below DBL_MIN (strtod's ERANGE) is a number, not an error
	 * that quotes a number */
	p = t_write("d.csv", "arrival_s,prompt_tokens,output_tokens\n"
		    "5e-324,10,10\n1.0,10,10\n");
	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, NULL, &e) == 0, "%s", e.msg);
	wl_trace_release(&t);
	/* a trace saved with a byte order mark reads as one without */
	p = t_write("c.csv", FS_BOM "arrival_s,prompt_tokens,output_tokens\n"
		    "0.5,10,10\n1.0,10,10\n");
	CHECK_MSG(wl_trace_load(&t, p, "auto", 1, NULL, &e) == 0 && t.n == 2,
		  "%s", e.msg);
	wl_trace_release(&t);
}

/* A config names the format and the speed; with another arrival they
 * are refused. */
static void config_keys(void)
{
	const char *p = t_write("moon2.jsonl", "{\"timestamp\": 1000, "
		"\"input_length\": 10, \"output_length\": 5}\n");
	char set[1024];
	const char *one[] = { set };
	const char *bad[] = { "/tenants/0/workload/trace_speed=2" };
	struct cfg c;
	struct err e;

	snprintf(set, sizeof(set), "/tenants/0/workload={\"arrival\": "
		 "\"trace\", \"trace\": \"%s\", \"trace_format\": \"mooncake\", "
		 "\"trace_speed\": 4}", p);
	CHECK_MSG(cfg_load(&c, "tests/data/small.json", one, 1, &e) == 0, "%s",
		  e.msg);
	CHECK(c.groups[0].wl_trace.n == 1 &&
	      c.groups[0].wl_trace.rows[0].arrive_s == 0.25);
	cfg_release(&c);
	CHECK(cfg_load(&c, "tests/data/small.json", bad, 1, &e) < 0 &&
	      strstr(e.msg, "/tenants/0/workload/trace_speed: expected nothing: "
		     "it reads an arrival trace"));
}

/* A request longer than the model's context is refused, from a trace or
 * from the lengths, and so is one the KV pool cannot hold; /cloud/
 * context_tokens states a longer context. */
static void context(void)
{
	char set[1024];
	const char *trace[] = { set };
	const char *lengths[] = { "/tenants/0/workload/prompt_tokens=30000" };
	const char *longer[] = { "/tenants/0/workload/prompt_tokens=30000",
				 "/cloud/context_tokens=32768" };
	struct cfg c;
	struct err e;

	snprintf(set, sizeof(set), "/tenants/0/workload={\"arrival\": "
		 "\"trace\", \"trace\": \"%s\"}", t_write("long.csv",
		 "0,100,10\n1,4000,200\n"));
	CHECK(cfg_load(&c, "configs/paper/cloud_only.json", trace, 1, &e) < 0 &&
	      strstr(e.msg, "/tenants/0/workload: its longest request, 4200 "
		     "tokens (prompt and output, ") &&
	      strstr(e.msg, "long.csv:2), exceeds the 4096 positions of "
		     "/cloud/context_tokens (llama2-7b's"));
	/* a KV pool below that row names it too */
	{
		const char *small_kv[] = { set, "/cloud/context_tokens=8192",
					   "/cloud/kv_capacity_tokens=1024" };

		CHECK(cfg_load(&c, "configs/paper/cloud_only.json", small_kv, 3,
			       &e) < 0);
		CHECK_MSG(strstr(e.msg, "fewer than one request") &&
			  strstr(e.msg, "long.csv:2)"), "%s", e.msg);
	}
	/* and one that holds it only in the blocks the watermark keeps free
	 * (263 blocks of 16, 2 kept), before the run, not in it */
	{
		const char *kept[] = { set, "/cloud/context_tokens=8192",
				       "/cloud/kv_capacity_tokens=4208" };

		CHECK(cfg_load(&c, "configs/paper/cloud_only.json", kept, 3,
			       &e) < 0);
		CHECK_MSG(strstr(e.msg, "(263 blocks of 16, 2 kept free by the "
				 "watermark) are fewer than one request") &&
			  strstr(e.msg, "long.csv:2)"), "%s", e.msg);
	}
	CHECK(cfg_load(&c, "configs/paper/cloud_only.json", lengths, 1, &e) < 0 &&
	      strstr(e.msg, "its longest request, 30256 tokens"));
	CHECK_MSG(cfg_load(&c, "configs/paper/cloud_only.json", longer, 2, &e) == 0,
		  "%s", e.msg);
	cfg_release(&c);
}

const struct tcase traces_tests[] = {
	{ "traces: Azure's dates, made relative, at any speed", azure },
	{ "traces: BurstGPT by its header, failures skipped", burstgpt },
	{ "traces: Mooncake's JSON lines, ms to s", mooncake },
	{ "traces: a user's requests go to one tenant", users },
	{ "traces: ShareGPT's conversations through a tokenizer", sharegpt },
	{ "traces: unsorted arrival times are an error", unsorted },
	{ "traces: a config names the format and the speed", config_keys },
	{ "traces: a request beyond the model's context is refused", context },
	{ 0 },
};
