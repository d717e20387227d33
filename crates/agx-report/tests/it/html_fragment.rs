//! `html::fragment` (Python's `_repr_html_`, issue 29): the page's body in
//! one `div` whose style rules all apply inside it, nothing of a whole
//! document. (python/tests/test_notebook.py renders it in a notebook.)

use agx_isa::asm::assemble_insns;
use agx_report::{html, Options, Profile};

fn profile() -> Profile {
    let insns = assemble_insns("a:\nfadd32 r4, r1, r2\njmp_exec_any a\nstop\n").expect("assembles");
    Profile::build("k".into(), None, insns, None, vec![], &Options::default())
}

#[test]
fn fragment_is_the_body_with_every_rule_scoped() {
    let p = [profile()];
    let page = html::document(&p);
    let frag = html::fragment(&p);
    let body_start = page.find("<body>\n").expect("a body") + "<body>\n".len();
    let body = &page[body_start..page.find("<script>").expect("a script")];
    assert!(body.contains("<section class=\"kernel\""));
    assert!(frag.contains(body), "the fragment holds the page's body");
    for tag in ["<!DOCTYPE", "<html", "<head>", "<body", "<script"] {
        assert!(!frag.contains(tag), "{tag} in the fragment");
    }
    let id = frag
        .strip_prefix("<div class=\"metal-profiler-report\" id=\"")
        .and_then(|r| r.split('"').next())
        .expect("one wrapper div with an id");
    assert!(frag.trim_end().ends_with("</div>"));
    let style = &frag[frag.find("<style>").unwrap() + 7..frag.find("</style>").unwrap()];
    let scope = format!("#{id}");
    let mut rules = 0;
    for rule in style.split('}').filter(|r| r.contains('{')) {
        let selectors = rule.split('{').next().unwrap();
        for sel in selectors.split(',') {
            let sel = sel.trim();
            assert!(
                sel == scope || sel.starts_with(&format!("{scope} ")),
                "unscoped selector {sel:?}"
            );
        }
        rules += 1;
    }
    assert!(rules > 50, "{rules} rules");
    // the same report gets the same id; another report another one
    assert_eq!(frag, html::fragment(&p));
    let mut q = profile();
    q.name = "other".into();
    assert!(!html::fragment(&[q]).contains(id));
}

#[test]
fn scoped_css_places_root_body_and_star() {
    let css =
        ":root{--a:1}\n*{box-sizing:border-box}\nbody{margin:0}\nh2,table.x td{color:red}.a.b{x:y}";
    assert_eq!(
        html::scoped_css("#s", css),
        "#s{--a:1}\n#s,#s *{box-sizing:border-box}\n#s{margin:0}\n#s h2,#s table.x td{color:red}\n#s .a.b{x:y}\n"
    );
}
