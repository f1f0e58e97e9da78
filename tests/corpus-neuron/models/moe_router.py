"""Token-choice top-k mixture-of-experts block (Mixtral-style) and its logging helpers."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoeBlock(nn.Module):
    def __init__(self, dim: int = 1024, hidden: int = 3584, num_experts: int = 8, top_k: int = 2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList(Expert(dim, hidden) for _ in range(num_experts))

    def forward(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch, seq, dim = hidden_states.shape
        flat = hidden_states.view(-1, dim)
        router_logits = self.gate(flat)
        routing_weights = F.softmax(router_logits, dim=-1, dtype=torch.float)
        routing_weights, selected = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights = routing_weights / routing_weights.sum(dim=-1, keepdim=True)

        final = torch.zeros_like(flat)
        for e in torch.unique(selected).tolist():  # expect: compilation
            hit = selected == e                                                     # (tokens, k)
            token_idx = torch.nonzero(hit.any(dim=-1), as_tuple=False).squeeze(-1)  # expect: compilation
            weight = routing_weights.masked_select(hit).unsqueeze(-1)               # expect: compilation
            out = self.experts[e](flat[token_idx]) * weight
            final.index_add_(0, token_idx, out.to(flat.dtype))
        return final.view(batch, seq, dim), router_logits


class LastTokenPooler(nn.Module):
    """Picks the hidden state of the last non-pad token of each right-padded sequence."""

    def __init__(self, pad_id: int = 0):
        super().__init__()
        self.pad_id = pad_id

    def forward(self, input_ids: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        pad_positions = (input_ids == self.pad_id).nonzero()  # expect: compilation
        lengths = torch.full((input_ids.shape[0],), input_ids.shape[1], device=input_ids.device)
        lengths.scatter_reduce_(0, pad_positions[:, 0], pad_positions[:, 1], reduce="amin")
        return states[torch.arange(states.shape[0], device=states.device), lengths - 1]


def expert_load_histogram(selected: torch.Tensor) -> dict[int, int]:
    """Logging helper; called on the host after .cpu() for the dashboard."""
    ids, counts = torch.unique(selected.detach().cpu(), return_counts=True)  # ok
    return dict(zip(ids.tolist(), counts.tolist()))


def load_balancing_loss(router_logits: torch.Tensor, selected: torch.Tensor, num_experts: int) -> torch.Tensor:
    probs = router_logits.softmax(-1)
    density = F.one_hot(selected[:, 0], num_experts).float().mean(0)
    return num_experts * (density * probs.mean(0)).sum()
