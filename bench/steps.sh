#!/bin/sh
# steps.sh: where a two-round MRTR flow's cost goes, step by step, in
# process. It runs the server package's BenchmarkMRTRTwoRounds (a whole
# flow per operation: round 1 answers input_required, round 2 carries the
# answer and the state) and BenchmarkToolsCall (a plain call) twice each:
# once with a CPU profile, once with every allocation recorded. For each
# step it prints the share of the CPU samples whose stack holds the step's
# functions (times ns/op: the step's CPU per operation, GC's background
# work not included) and the allocations made under them per operation
# (exact). A step's functions are pprof regular expressions (focus, and
# ignore for what a nested step counts). The usual request's limits are
# checked by the envelope walk as it reads (server.decodeEnvelope): they
# count in the envelope row; rpcwire.CheckLimits runs only for a body the
# walk leaves to the library decoder.
#
#   ./steps.sh [N]      N operations per benchmark run (default 20000)
set -eu
n=${1:-20000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$(dirname "$0")/.."
go test -c -o "$dir/server.test" ./server

# step;focus;ignore
steps='read and pre-scan;server\.readBody$|server\.readCallHeaders$|server\.checkStandardHeaders$|rpcwire\.CheckLimits$;
envelope (decode the request);server\.decodeModern$;
open and verify the state (JWT, claims, binding);seal\.\(\*Sealer\)\.verify$|seal\.\(\*State\)\.Check$;
decrypt the state (base64, AES-GCM, binary record);seal\.\(\*Sealer\)\.Open$;seal\.\(\*Sealer\)\.verify$
validate arguments;server\.validateArguments$|server\.\(\*flatSchema\)\.accepts$;
run the handler (its own work and asking);server\.invoke;elicit\.\(\*Request\)\.CheckResult$
validate the answer;elicit\.\(\*Request\)\.CheckResult$;
seal the state (claims, binary record, JWT);seal\.\(\*Sealer\)\.Seal$;gcm.*\.Seal$
encrypt the state (AES-GCM);gcm.*\.Seal$;
write the result;sse\.\(\*Stream\)\.finish$;
whole request (ServeHTTP);server\.\(\*Server\)\.ServeHTTP$;'

share() { # profile sample_index focus ignore field -> field 5 (the focused samples) or 6 (their share, %)
	go tool pprof -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 -sample_index="$2" -focus="$3" ${4:+-ignore="$4"} "$1" 2>/dev/null |
		awk -v f="$5" '/^Showing nodes accounting for/ { v=$f; sub(/,$/, "", v); sub(/%$/, "", v); print v; found=1 } END { if (!found) print 0 }'
}
count() { # 1234, 12.3k, 1.2M -> number
	echo "$1" | awk '{ v=$1; m=1; if (v ~ /k$/) m=1e3; if (v ~ /M$/) m=1e6; gsub(/[kM]$/, "", v); print v*m }'
}

for bench in MRTRTwoRounds ToolsCall; do
	out=$("$dir/server.test" -test.run NONE -test.bench "^Benchmark$bench\$" -test.benchtime "${n}x" -test.benchmem -test.cpuprofile "$dir/$bench.cpu")
	nsop=$(echo "$out" | awk '/ns\/op/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") print $i }')
	allocs=$(echo "$out" | awk '/allocs\/op/ { for (i = 1; i <= NF; i++) if ($(i+1) == "allocs/op") print $i }')
	"$dir/server.test" -test.run NONE -test.bench "^Benchmark$bench\$" -test.benchtime "${n}x" -test.memprofile "$dir/$bench.mem" -test.memprofilerate 1 >/dev/null
	echo
	echo "Benchmark$bench: $nsop ns/op, $allocs allocs/op (one goroutine, in process; $n ops)"
	echo
	echo "| step | CPU share | ≈ µs/op | allocs/op |"
	echo "|---|---:|---:|---:|"
	echo "$steps" | while IFS=';' read -r name focus ignore; do
		[ -n "$name" ] || continue
		pct=$(share "$dir/$bench.cpu" samples "$focus" "$ignore" 6)
		objs=$(count "$(share "$dir/$bench.mem" alloc_objects "$focus" "$ignore" 5)")
		awk -v name="$name" -v pct="$pct" -v nsop="$nsop" -v objs="$objs" -v n="$n" 'BEGIN {
			printf "| %s | %.1f%% | %.1f | %.1f |\n", name, pct, pct * nsop / 100000, objs / (n + 1)
		}'
	done
done
