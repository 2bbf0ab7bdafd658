# gantt.awk: one tenant's timeline from a trace.json (`hybridspec run
# --trace`: one event a line) as rows for gantt.gp.
#
#   awk -f scripts/gantt.awk -v tenant=0 -v window_s=2 trace.json trace.json
#
# The file is read twice. Pass 1 keeps the tenant's spans: drafting (pid
# 1), uplink (2), downlink (3) and cloud queue (4) are on track tid =
# tenant; and notes when its messages reach the cloud (end of an uplink
# span) and leave the queue (end of a queued span). Pass 2 takes the GPU
# batches (pid 5, track = replica) that start at one of those instants,
# within 1 us: the batches its work ran in (an idle GPU starts a batch when
# a block arrives; a busy one takes the queued block at its next batch).
#
# Out: "row start_ms end_ms "label"" for each span over the window
# [t0, t0 + window_s), t0 the tenant's first drafting, clipped to it; rows
# 0 to 4: drafting, uplink, cloud queue, GPU, downlink (a row without a
# span gets one line of nan, so that it keeps its label).
function field(name,   v) {
	if (!match($0, "\"" name "\":[^,}]*"))
		return ""
	v = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
	gsub(/"/, "", v)
	return v
}
function us(t) {
	return sprintf("%.0f", t)
}
BEGIN {
	label[0] = "drafting"
	label[1] = "uplink"
	label[2] = "cloud queue"
	label[3] = "GPU"
	label[4] = "downlink"
	rowof[1] = 0
	rowof[2] = 1
	rowof[4] = 2
	rowof[3] = 4
	first = -1
}
!/"ph":"X"/ {
	next
}
{
	pid = field("pid") + 0
	ts = field("ts") + 0
	end = ts + field("dur")
}
FNR == NR {
	if (pid == 5 || field("tid") != tenant "")
		next
	n++
	ev_row[n] = rowof[pid]
	ev_t0[n] = ts
	ev_t1[n] = end
	if (pid == 1 && (first < 0 || ts < first))
		first = ts
	if (pid == 2 || pid == 4)
		ready[us(end)] = 1
	next
}
pid == 5 && (us(ts) in ready || us(ts - 1) in ready || us(ts + 1) in ready) {
	n++
	ev_row[n] = 3
	ev_t0[n] = ts
	ev_t1[n] = end
}
END {
	if (first < 0) {
		printf "gantt.awk: tenant %s never drafts in %s\n", tenant,
		       FILENAME > "/dev/stderr"
		exit 2
	}
	last = first + window_s * 1e6
	for (i = 1; i <= n; i++) {
		if (ev_t1[i] <= first || ev_t0[i] >= last)
			continue
		r = ev_row[i]
		spans[r]++
		printf "%d %.3f %.3f \"%s\"\n", r,
		       ((ev_t0[i] > first ? ev_t0[i] : first) - first) / 1e3,
		       ((ev_t1[i] < last ? ev_t1[i] : last) - first) / 1e3, label[r]
	}
	for (r = 0; r < 5; r++)
		if (!spans[r])
			printf "%d nan nan \"%s\"\n", r, label[r]
}
