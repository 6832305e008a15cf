"""Rate limits and refusals (issue 32, item 6): every Retry-After form, quota vs rate, permanent 500s."""
import email.utils

import pytest

from creval.models import retry


def test_every_retry_after_form_is_read():
    assert retry.retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == pytest.approx(1.5)
    assert retry.retry_after({"retry-after": "7"}) == 7.0
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert retry.retry_after({"retry-after": date}, now=1_000_000.0) == pytest.approx(30.0)
    assert retry.retry_after({"retry-after": "soon"}) is None and retry.retry_after({}) is None


def test_quota_rate_and_permanent_refusals_are_told_apart():
    quota = '{"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", ' \
            '"code": "insufficient_quota"}}'
    rate = '{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}'
    assert retry.classify(429, quota) == "quota"
    assert retry.classify(429, rate) == "retry"
    assert retry.classify(500, '{"error": {"code": 500, "message": "Only no echo is supported"}}') == "refused"
    assert retry.classify(500, "internal error") == "retry"
    assert retry.classify(400, "{}") == "fail"
    assert retry.error_message(rate) == "Rate limit reached"


def test_waits_follow_the_server_and_grow_otherwise_within_a_cap():
    assert 2.0 <= retry.backoff(0, 0.5, 2.0) <= 2.5
    assert 4.0 <= retry.backoff(3, 0.5, None) <= 5.0
    assert retry.backoff(20, 0.5, None) <= retry.MAX_WAIT * 1.25
    # the default retries outlast a one-minute rate-limit window
    assert sum(min(retry.MAX_WAIT, 0.5 * 2 ** k) for k in range(8)) > 60
