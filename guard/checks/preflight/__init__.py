"""Preflight: before any call is proposed, can a tool serve the request with the values given?

``Guard.check`` judges a call a model proposed. Some failures show earlier, in the conversation and
the tool list alone: no tool does what the user asks, the user has not said a value the tool cannot
run without, or the user said a value the tool's schema rejects. Caught before the model runs, they
cost no round trip, and the model gets no chance to invent the missing value or quietly "fix" the
wrong one.

``assess`` works in these steps, all lexical:

1. **Relevance.** ``relevance.rank_tools`` scores every available tool against the user's latest
   request and against everything the user said, and keeps each tool's better score ("Asian
   cuisine, please" answers an earlier question). Below ``checks.preflight.min_relevance`` there
   is no suitable tool.
2. **Wrong values.** For the best tool's constrained parameters (pattern, format, enum, length,
   bounds), a value the user wrote that is meant for a parameter is validated against its schema,
   and one that breaks it is reported with the user's text verbatim. A value is meant for a
   parameter when the parameter's words stand right before it ("my email is ...", "ID 123ABC", "a
   principal amount of -1000", "250 square feet"), or when it is the one leftover value of the
   parameter's shape and no other parameter could take it.
3. **Missing values.** Every required parameter (nested required properties of required objects
   and of the items of required lists included) needs evidence of its kind in what the user and
   the system said: a number for a number, a date for a date, an ``@`` for an e-mail, a code, name
   or number for an id, a named member for an enum, a proper name for a city, and for free text a
   quoted phrase, a code, a name that is not just a tool's service ("BoardGameGeek"), or a word
   introduced as the topic ("related to dragons"). A required object that requires nothing of its
   own is valid as ``{}`` yet serves no one empty: it needs evidence for any one of its leaves.
   Booleans are assumed given.
4. **Several tools.** A request made of parts ("list the departments; also compress the image")
   may need a tool per part: each part's best tool is judged too, on the words of its own part
   (and the earlier turns), unless its part takes its values from an earlier step ("for this
   location").
5. **Unresolved references** (``guard.checks.references``): "my favorite number", "a specific
   breed", "the year Larry requested" point at a value never stated, whichever parameter (required
   or optional) it would fill.
6. **Unmentioned services.** A service the request names as where to act ("on Kucoin", "via OKX")
   that no tool's name, service or description mentions, and that is no parameter's value: the
   tool for it is missing, however close the remaining tools embed.

The package, by concern: ``parameters`` (what each parameter takes), ``reading`` (what a message
says), ``values`` (wrong and missing values), ``services`` (unmentioned services) and ``assess``
(the steps above, over the tools a request needs).

The embedding seam: ``semantic`` may offer ``rank_tools(request, registry)`` (``ToolRanker``); its
ranking then replaces the lexical one, and nothing else changes.
"""

from __future__ import annotations

from guard.checks.preflight.assess import LATER_STEP_CONFIDENCE, Preflight, ToolRanker, assess
from guard.checks.preflight.values import NAME, Found

__all__ = ["LATER_STEP_CONFIDENCE", "NAME", "Found", "Preflight", "ToolRanker", "assess"]
