use candle_core::{Device, Tensor};
use std::time::Instant;
fn main() {
    let d = Device::Cpu;
    for (m, k, n) in [(3200usize, 384usize, 1152usize), (3200, 384, 1536), (3200, 1536, 384), (3200,384,384)] {
        let a = Tensor::randn(0f32, 1., (m, k), &d).unwrap();
        let b = Tensor::randn(0f32, 1., (k, n), &d).unwrap();
        let bt = Tensor::randn(0f32, 1., (n, k), &d).unwrap();
        let _ = a.matmul(&b).unwrap();
        let t = Instant::now();
        for _ in 0..10 { let _ = a.matmul(&b).unwrap(); }
        let s = t.elapsed().as_secs_f64() / 10.;
        let t2 = Instant::now();
        for _ in 0..10 { let _ = a.matmul(&bt.t().unwrap()).unwrap(); }
        let s2 = t2.elapsed().as_secs_f64() / 10.;
        println!("{m}x{k}x{n}: {:.1} GFLOP/s (row-major W), {:.1} GFLOP/s (W^T view)", 2.0*(m*k*n) as f64/s/1e9, 2.0*(m*k*n) as f64/s2/1e9);
    }
}
