"""Fixed-window rate limit arithmetic, pure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    start: int
    reset_at: int


def window_for(epoch_seconds: float, window_seconds: int) -> Window:
    start = int(epoch_seconds // window_seconds) * window_seconds
    return Window(start=start, reset_at=start + window_seconds)


@dataclass(frozen=True)
class RateLimitDecision:
    category: str
    limit: int
    hits: int
    reset_at: int
    now_epoch: float

    @property
    def allowed(self) -> bool:
        return self.hits <= self.limit

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.hits)

    @property
    def retry_after(self) -> int:
        return max(1, int(self.reset_at - self.now_epoch + 0.999))

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Category": self.category,
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_at),
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers
