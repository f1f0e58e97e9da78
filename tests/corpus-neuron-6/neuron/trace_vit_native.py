# target: neuron
"""Export a ViT classifier for Inf2 serving."""
import torch
import torch_neuronx  # may: runtime
from transformers import ViTForImageClassification

DEVICE = torch.device("neuron")  # ok


def export(path="vit_neuron.pt", batch_size=4):
    model = ViTForImageClassification.from_pretrained("google/vit-base-patch16-224", torchscript=True).eval()
    example = torch.rand(batch_size, 3, 224, 224)
    model = model.to(DEVICE)  # expect: runtime
    traced = torch_neuronx.trace(model, example.to(DEVICE))  # may: runtime
    torch.jit.save(traced, path)
    return path


def export_cpu_first(path="vit_neuron_ok.pt", batch_size=4):
    model = ViTForImageClassification.from_pretrained("google/vit-base-patch16-224", torchscript=True).eval()
    example = torch.rand(batch_size, 3, 224, 224)
    traced = torch_neuronx.trace(model, example)  # may: runtime
    torch.jit.save(traced, path)
    return path


if __name__ == "__main__":
    export_cpu_first()
