"""Bodies of the trading-playbook group: GET and PUT /api/degen/config."""

from __future__ import annotations

from typing import Annotated

from pydantic import AllowInfNan, ConfigDict, Field, RootModel, Strict, model_validator

from quantscope.sandbox.models._common import (
    ConfigField,
    ConfigId,
    ConfigType,
    ContractModel,
    ExtraInfo,
    Flag,
    Integer,
    Interval,
    MarketCapClass,
    Number,
    Score,
    Success,
    Text,
)


class ConfigTypeEntry(ContractModel):
    """A criterion's settings for one config type, each a map keyed by interval name."""

    thresholds: dict[Interval, Number]
    weights: dict[Interval, Annotated[float, Strict(), AllowInfNan(False), Field(ge=0)]]
    requireds: dict[Interval, Flag]
    disableds: dict[Interval, Flag]
    extraInfos: dict[Interval, ExtraInfo]
    delegates: dict[Interval, Flag]
    configIdsByInterval: dict[Interval, ConfigId] = Field(
        description="Config entry ids (UUID text), the configId of PUT /api/degen/config."
    )
    configKeys: dict[Interval, Text]


class PlaybookCriterion(ContractModel):
    """One criterion of a playbook with its settings per config type."""

    rootKey: Text
    criteriaName: Text
    shortDescription: Text
    longDescription: Text
    isHumanCriteria: Flag
    configTypes: dict[ConfigType, ConfigTypeEntry] = Field(
        description="SCANNING decides TOKEN_STATUS evaluations, BUYING TOKEN_BUY and TOKEN_SELL."
    )


class PlaybookCategories(ContractModel):
    """The criteria of a playbook, by category."""

    security: list[PlaybookCriterion] = Field(alias="Security")
    market: list[PlaybookCriterion] = Field(alias="Market")
    social: list[PlaybookCriterion] = Field(alias="Social")
    ai: list[PlaybookCriterion] = Field(alias="AI")
    technical_analysis: list[PlaybookCriterion] = Field(alias="Technical Analysis")
    onchain: list[PlaybookCriterion] = Field(alias="Onchain")


class PlaybookElement(ContractModel):
    """The playbook of one market-cap class."""

    marketCap: MarketCapClass = Field(
        description="DEGEN_CAP < $1M, LOW_CAP $1M-$10M, MID_CAP >= $10M (at evaluation time)."
    )
    categories: PlaybookCategories
    passMark: dict[ConfigType, Score] = Field(
        description=(
            "Extension: per config type (SCANNING, BUYING), the weighted score (0-100) an "
            "evaluation of this class must reach."
        )
    )
    configGroupId: Text = Field(description="Extension: the quant's config group.")


class PlaybookConfig(RootModel[list[PlaybookElement]]):
    """Response of GET /api/degen/config: one element per market-cap class."""

    model_config = ConfigDict(strict=True)


class ConfigChange(ContractModel):
    """One change of a PUT /api/degen/config request."""

    configId: ConfigId = Field(description="A configIdsByInterval value.")
    field: ConfigField
    newValue: Number | Flag | ExtraInfo = Field(
        description="A number for threshold and weight, a boolean for required and disabled, "
        "an Extra info object for extraInfo."
    )

    @model_validator(mode="after")
    def _value_fits_field(self) -> ConfigChange:
        """Reject a newValue whose JSON type does not fit the field it changes."""
        expected: dict[str, type | tuple[type, ...]] = {
            "threshold": (int, float),
            "weight": (int, float),
            "required": bool,
            "disabled": bool,
            "extraInfo": ExtraInfo,
        }
        want = expected[self.field]
        value = self.newValue
        is_bool = isinstance(value, bool)
        if (want is bool) != is_bool or not isinstance(value, want):
            raise ValueError(f"newValue of {self.field!r} has the wrong type")
        return self


class PlaybookUpdateRequest(ContractModel):
    """Body of PUT /api/degen/config: all changes are validated, then applied together."""

    quantId: Integer
    newConfigs: list[ConfigChange] = Field(min_length=1)


class UpdatedConfig(ContractModel):
    """A config entry as it is after a PUT."""

    id: ConfigId
    criteriaId: Integer
    criteriaKey: Text
    threshold: Number
    weight: Number = Field(ge=0)
    required: Flag
    disabled: Flag
    configType: ConfigType
    extraInfo: ExtraInfo


class PlaybookUpdateResponse(ContractModel):
    """Response of PUT /api/degen/config."""

    success: Success
    updatedConfigs: list[UpdatedConfig]
