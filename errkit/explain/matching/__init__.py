"""The matcher, one room per job (docs/architecture.md, "The matcher's rooms"). A pasted text or a
log goes through them in this order:

- `chunks`: a whole input read in chunks, every match in order; the distinct answers counted;
- `blocks`: one block of text, line by line (in a log, the lines the prefilter finds);
- `memory`: the answers to log lines already read, by the line less its stamp's digits;
- `line`: one line read as pasted (a message, a JSON log line, a note line, a docs link);
- `around`: what the text around a match adds (ties, the kernel that raised it, values after it,
  the context, the raise site of a traceback);
- `together`: one error printed over several lines, one answer;
- `rereading`: a paste read again, its hard-wrapped lines joined, then without case (issue 51);
- `approximate`: the closest wordings, when nothing matched exactly.

Under them: `index` (the compiled index read, its lookups, each wording's regex), `keys` (which
wordings a line may be; the prefilter's locator), `text` (a line's text: colours, `SomeError:`,
JSON strings) and `found` (what a match holds). Each room keeps its own caches (`Index.room`)."""
