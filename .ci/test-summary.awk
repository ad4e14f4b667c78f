# test-summary.awk — reads `go test -json` and prints what plain `go test` would (one line
# per package, the output of failed tests in full), then every skipped test with its reason,
# then "N passed, N failed, N skipped" on a line of its own. The input may hold several runs
# (make test appends the keyring run): a test skipped in one run and run in a later one
# counts as run, not as skipped. Used by `make test` and `make bench-smoke`.
# Exit status: 1 when a test or package failed or a build broke.
function field(line, name,    re, v) {
	re = "\"" name "\":\"([^\"\\\\]|\\\\.)*\""
	if (!match(line, re)) return ""
	v = substr(line, RSTART + length(name) + 4, RLENGTH - length(name) - 5)
	gsub(/\\n/, "\n", v); gsub(/\\t/, "\t", v); gsub(/\\"/, "\"", v); gsub(/\\u003c/, "<", v)
	gsub(/\\u003e/, ">", v); gsub(/\\u0026/, "\\&", v); gsub(/\\\\/, "\\", v)
	return v
}
!/^{/ { print; if ($0 ~ /^(FAIL|# )/) failed = 1; next }
{
	action = field($0, "Action"); pkg = field($0, "Package"); test = field($0, "Test")
	key = pkg " " test
	if (action == "output") { out[key] = out[key] field($0, "Output"); next }
	if (action == "skip" && test != "") {
		reason = ""
		n = split(out[key], lines, "\n")
		for (i = 1; i <= n; i++)
			if (lines[i] ~ /^ +[^ ]+\.go:[0-9]+: /) { sub(/^ +/, "", lines[i]); reason = reason (reason == "" ? "" : " ") lines[i] }
		if (!(key in result) && !(key in skips)) { skips[key] = pkg "." test ": " (reason == "" ? "(no reason given)" : reason); order[++nskip] = key }
	} else if (action == "fail") {
		failed = 1
		printf "%s", out[key]
		if (test == "") print "FAIL\t" pkg
	} else if (action == "pass" && test == "") {
		printf "ok  \t%s\t%.3fs\n", pkg, field2($0)
	}
	if (test != "" && (action == "pass" || action == "fail")) { result[key] = action; delete skips[key] }
	if (action == "pass" || action == "fail" || action == "skip") delete out[key]
}
function field2(line) { return match(line, /"Elapsed":[0-9.]+/) ? substr(line, RSTART + 10, RLENGTH - 10) + 0 : 0 }
END {
	skipped = 0
	for (i = 1; i <= nskip; i++) if (order[i] in skips) skipped++
	if (skipped > 0) {
		print ""
		print "Skipped (" skipped "):"
		for (i = 1; i <= nskip; i++) if (order[i] in skips) { print "  " skips[order[i]]; delete skips[order[i]] }
	}
	for (k in result) { if (result[k] == "pass") npass++; else nfail++ }
	print ""
	printf "%d passed, %d failed, %d skipped\n", npass, nfail, skipped
	exit failed
}
