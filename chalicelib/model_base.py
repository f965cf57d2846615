"""The base of every pydantic model in the service.

`defer_build` postpones building a model's validator until its first use: a Lambda cold start
then pays only for the models its route touches, not for all of them at import.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ApiModel(BaseModel):
    model_config = ConfigDict(defer_build=True)
