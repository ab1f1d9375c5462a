"""PyTorch network-layer launches for the Nsight Compute fixtures: attention,
convolution, embedding and loss kernels, whose library code sets large dynamic
shared memory and its own carveouts."""
import torch
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    dev = "cuda"
    q = torch.randn(4, 8, 512, 64, device=dev, dtype=torch.float16)
    F.scaled_dot_product_attention(q, q, q, is_causal=True)
    img = torch.randn(8, 32, 64, 64, device=dev)
    w = torch.randn(64, 32, 3, 3, device=dev)
    F.conv2d(img, w, padding=1)
    emb = torch.randn(50000, 256, device=dev)
    idx = torch.randint(0, 50000, (4096,), device=dev)
    logits = F.embedding(idx, emb) @ emb[:1000].T
    F.cross_entropy(logits, torch.randint(0, 1000, (4096,), device=dev))
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
