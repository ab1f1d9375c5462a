"""PyTorch launches for the Nsight Compute fixtures: library kernels (cuBLAS,
softmax, layer norm, reductions, elementwise) at sizes from one wave to many."""
import torch


def main():
    torch.manual_seed(0)
    dev = "cuda"
    for n in (256, 2048):
        a = torch.randn(n, n, device=dev)
        b = torch.randn(n, n, device=dev)
        (a @ b).relu_()
        (a.half() @ b.half()).float()
    x = torch.randn(4096, 1024, device=dev)
    torch.softmax(x, dim=-1)
    torch.nn.functional.layer_norm(x, (1024,))
    x.sum(dim=0)
    x.sum()
    torch.add(x, 1.0)
    torch.randn(77, device=dev).mul_(2)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
