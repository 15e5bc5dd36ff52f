"""A log of N error lines whose values (and hosts) are all distinct: the worst case for memory of
`errkit explain --all` and its report, which keep what they have seen per code (issue 48).

    python scripts/distinct_values_log.py 2000000 > distinct.log
    /usr/bin/time -v errkit explain --all distinct.log > /dev/null       # "Maximum resident set size"
    /usr/bin/time -v errkit explain --all --report distinct.log > /dev/null
"""

import sys

LINES = (
    "{stamp} host=host-{i} ValueError: num_q_heads={a} must be divisible by and num_kv_heads={b}",
    "{stamp} host=host-{i} ValueError: q_block_size={a} should divide q_seq_len={c}.",
    '{{"time": "{stamp}", "host": "node-{i}", "msg": "ValueError: num_q_heads={a} must be divisible by and num_kv_heads={b}"}}',
)


def main(count: int, out=sys.stdout) -> None:
    write = out.write
    for i in range(count):
        stamp = f"2026-01-{1 + i // 86_400_000 % 28:02d}T{i // 3_600_000 % 24:02d}:{i // 60_000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z"
        a = 3 * i + 7  # distinct on every line, never a multiple of b
        write(LINES[i % len(LINES)].format(stamp=stamp, i=i, a=a, b=a + 1, c=a * 2 + 1) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
