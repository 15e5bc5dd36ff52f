"""The matcher, one room per job (docs/architecture.md, "The matcher's rooms"). A pasted text or a
log goes through them in this order:

- `chunks`: a whole input read in chunks, every match in order; the distinct answers counted;
- `blocks`: one block of text, line by line (the prefilter picks the lines a log reads);
- `memory`: the answers to log lines already read, by the line less its stamp's digits;
- `line`: one line read as pasted (a message, a JSON log line, a note line, a docs link);
- `around`: what the text around a match adds (ties, the kernel that raised it, values after it,
  the context, the raise site of a traceback);
- `together`: one error printed over several lines, one answer;
- `approximate`: the closest wordings, when nothing matched exactly;
- `index`: the compiled index read, its lookups and its regexes; `keys`: the prefilter's keys;
  `found`: what a match holds.

Each room keeps its own caches (`Index.room`)."""
