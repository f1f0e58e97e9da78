"""Row-wise softmax in Triton (adapted from the Triton tutorials)."""
import torch
import triton  # expect-any(triton-softmax): kernels
import triton.language as tl  # expect-any(triton-softmax): kernels


@triton.jit  # expect-any(triton-softmax): kernels
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)  # may: kernels
    num_warps = 8 if BLOCK_SIZE >= 2048 else 4
    y = torch.empty_like(x)
    props = torch.cuda.get_device_properties(x.device)  # expect: device|runtime
    num_programs = min(props.multi_processor_count * 4, n_rows)
    softmax_kernel[(num_programs,)](y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                    BLOCK_SIZE=BLOCK_SIZE, num_stages=2, num_warps=num_warps)  # may: kernels
    return y


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(1823, 781, device="cuda")  # expect: device
    torch.testing.assert_close(softmax(x), torch.softmax(x, dim=1))
