"""Repeating reminders: a spoken repeat <-> an RFC 5545 RRULE (dateutil), the next
occurrence, and the rule in words.

`parse_series(utterance, now)` reads "every monday and thursday at 7 until christmas"
into a `Series` (the RRULE without DTSTART, and its first occurrence), or says in one
sentence why it could never fire. `Series.after(moment)` is the next occurrence;
`Series.describe()` the rule in words ("every Monday at 19:00, until 24 December").
This package knows nothing of the table or the scheduler (mavend.scheduler stores a
series as `reminders.rule` and `rule_start`).
"""

from mavend.recurrence.rule import Series, describe_rule
from mavend.recurrence.spoken import SpokenSeries, parse_series

__all__ = ["Series", "SpokenSeries", "describe_rule", "parse_series"]
