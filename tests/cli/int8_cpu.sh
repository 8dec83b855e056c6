# int8_cpu.sh - sourced by the CLI tests: which INT8 tactics this CPU runs (/proc/cpuinfo flags), in one place.
#   vnni=1  AVX512-VNNI (the VNNI tactics, which also chain u8 codes)
#   int8=1  some INT8 tactic: VNNI, or the AVX2 variants (AVX2 + FMA)
vnni=0 int8=0
grep -qw avx512_vnni /proc/cpuinfo && vnni=1
if [ $vnni = 1 ] || { grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; }; then int8=1; fi
