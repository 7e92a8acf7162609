use wave::*;

#[wave::kernel]
pub fn acc(x: &[f32], y: &[f32], o: &mut [f32], n: u32) {
    let i = global_id(0);
    if i < n {
        let k = n as usize;
        let j = i as usize;
        let v = x[j];
        o[j] = v.exp();
        o[k + j] = v.exp2();
        o[2 * k + j] = v.ln();
        o[3 * k + j] = v.log2();
        o[4 * k + j] = v.sin();
        o[5 * k + j] = v.cos();
        o[6 * k + j] = v.sqrt();
        o[7 * k + j] = v.rsqrt();
    }
}
