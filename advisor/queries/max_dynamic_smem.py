"""`max-dynamic-smem`: the most dynamic shared memory per block that keeps N blocks per SM,
as cudaOccAvailableDynamicSMemPerBlock computes it, and the limiter that binds."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.occupancy import DynamicSharedMemBudget


@dataclass(frozen=True)
class BudgetAnswer:
    resolved: object  # specs' Resolved
    budget: DynamicSharedMemBudget

    @property
    def answered(self) -> bool:
        return self.budget.max_dynamic_shared_mem is not None

    def to_json(self) -> dict:
        from ..report import budget_document

        return budget_document(self.resolved, self.budget)


def max_dynamic_smem_query(resolved, config, blocks_per_sm: int) -> BudgetAnswer:
    from ..engine.occupancy import max_dynamic_shared_mem

    return BudgetAnswer(resolved, max_dynamic_shared_mem(resolved.arch, config, blocks_per_sm))
