"""The one lexical ranking: share of query words found, at the weight of the best field."""

from bee_hostkit.ranking import query_words, score, words


def test_words_are_lower_cased_runs_of_letters_and_digits_split_on_underscores() -> None:
    assert words("bee_artifact_search: Search LOGS, v2!") == ["bee", "artifact", "search", "logs", "v2"]


def test_stop_words_say_nothing() -> None:
    assert query_words("how do I search the logs") == ["search", "logs"]
    assert query_words("the of a") == []


def test_a_word_in_the_heaviest_field_scores_more_than_in_a_light_one() -> None:
    fields = [("release-notes", 1.0), ("Write notes from merged pull requests", 0.5)]
    assert score(["release"], fields) == 1.0
    assert score(["merged"], fields) == 0.5
    assert score(["release", "merged"], fields) == 0.75
    assert score(["deploy"], fields) == 0.0


def test_a_prefix_of_three_or_more_letters_counts_half() -> None:
    assert score(["sear"], [("searching", 1.0)]) == 0.5
    assert score(["se"], [("searching", 1.0)]) == 0.0


def test_no_query_or_no_fields_score_nothing() -> None:
    assert score([], [("x", 1.0)]) == 0.0
    assert score(["x"], []) == 0.0
