//! The LLM model specs in `rhizome_models` (no download).

use rhizome_models::{self as models, find, find_llm, LLMS, LLM_FILE, QWEN25_05B, QWEN25_15B, SMOLLM2_135M};

#[test]
fn llm_specs_are_consistent() {
    assert_eq!(find_llm("qwen2.5-0.5b"), Some(&QWEN25_05B));
    assert_eq!(find_llm("all-MiniLM-L6-v2"), None);
    // LLMs are not embedding models.
    assert_eq!(find("smollm2-135m"), None);
    assert!(models::ALL.iter().all(|s| !LLMS.contains(s)));
    for spec in LLMS {
        assert_eq!(spec.required_files, &[LLM_FILE]);
        let [j] = spec.joined_files else { panic!("{}: one joined file", spec.name) };
        assert_eq!(j.name, LLM_FILE);
        assert!(j.len.is_some(), "{}: size is checked", spec.name);
        let wheels = spec.wheels();
        if wheels.len() > 1 {
            // One part per wheel, in wheel order: `<module>_partN/data/partNN.bin`.
            let parts = j.part_names(spec);
            assert_eq!(parts.len(), wheels.len(), "{}", spec.name);
            for (i, w) in wheels.iter().enumerate() {
                assert!(w.pip_package.ends_with(&format!("-part{}", i + 1)), "{w:?}");
                assert!(w.wheel_subdir.ends_with(&format!("_part{}/data", i + 1)), "{w:?}");
                assert_eq!(parts[i], format!("part{:02}.bin", i + 1));
            }
        }
    }
    assert_eq!(SMOLLM2_135M.joined_files[0].len, Some(98_362_432));
    assert_eq!(QWEN25_05B.joined_files[0].len, Some(491_400_064));
    assert_eq!(QWEN25_15B.wheels().len(), 22);
    assert_eq!(QWEN25_15B.joined_files[0].len, Some(1_117_320_768));
}
