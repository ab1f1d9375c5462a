"""A small PyTorch model's forward pass and loss for the Nsight Compute fixtures:
cuDNN convolutions, cuBLAS GEMMs, PyTorch's own kernels (norms, activations,
softmax, reductions, embedding, loss), flash attention, and one Triton kernel,
about fifty launches, the mix a real model profiles."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, dim=256, heads=4, vocab=8192):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Conv2d(32, dim, 4, stride=4))
        self.embed = nn.Embedding(vocab, dim)
        self.block = Block(dim, heads)
        self.head = nn.Linear(dim, vocab)

    def forward(self, image, tokens):
        patches = self.stem(image).flatten(2).transpose(1, 2)
        x = torch.cat([patches, self.embed(tokens)], dim=1)
        return self.head(self.block(x))


def main():
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    model = Model().cuda().half()
    image = torch.randn(8, 3, 64, 64, device="cuda", dtype=torch.half)
    tokens = torch.randint(0, 8192, (8, 256), device="cuda")
    logits = model(image, tokens)
    F.cross_entropy(logits.float().view(-1, logits.shape[-1]), torch.randint(0, 8192, (8 * 512,), device="cuda"))
    model.stem.float()(image.float())
    x, y = torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    scale_add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), 0.5, BLOCK=1024)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
