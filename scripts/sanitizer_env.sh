# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: how the ASan+UBSan build reports. Any report
# fails the process (halt_on_error), so a test or fuzz run with a report is a failure.
SAN_SUPP="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/sanitizer_suppressions"
export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:strict_string_checks=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$SAN_SUPP/ubsan.supp"
export LSAN_OPTIONS="suppressions=$SAN_SUPP/lsan.supp:print_suppressions=0"
