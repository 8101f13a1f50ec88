//! Workspaces: named indexes kept beside the main one, isolated from it and from each
//! other, one place each: on SQLite a directory under `DIR/workspaces/`, on PostgreSQL a
//! schema of the same database (`rz_NAME`, reached through the connection's
//! `search_path`), on FalkorDB a graph of the same server (`GRAPH--NAME`, with its keys
//! under its own prefix). [`StoreUrl::workspace`] gives a workspace's URL; everything
//! else (reading, writing, the writer lock, the LLM cache) works on it as on any index.

use std::path::PathBuf;

use rhizome_core::{Error, Result};

use crate::{StoreUrl, DB_FILE};

/// The name of the main index, the workspace of requests that name none.
pub const DEFAULT_WORKSPACE: &str = "default";

/// Longest workspace name.
pub const MAX_NAME: usize = 48;

/// Check a workspace name: 1 to 48 of `a-z`, `0-9` and `-`, starting with a letter or a
/// digit. The same name makes a directory, a schema and a graph name on every backend.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-');
    if !ok {
        return Err(Error::bad_input(
            format!("workspace {name:?}"),
            format!(
                "a workspace name is 1 to {MAX_NAME} lowercase letters, digits and '-', starting with a letter \
                 or a digit (e.g. team-a)"
            ),
        ));
    }
    Ok(())
}

impl StoreUrl {
    /// The URL of workspace `name` beside this index (`default`: this index itself).
    pub fn workspace(&self, name: &str) -> Result<StoreUrl> {
        check_name(name)?;
        if name == DEFAULT_WORKSPACE {
            return Ok(self.clone());
        }
        Ok(match self {
            StoreUrl::Dir(d) => StoreUrl::Dir(workspaces_dir(d).join(name)),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => StoreUrl::Postgres(pg::with_schema(u, &pg::schema(name))),
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(u) => {
                let mut w = u.clone();
                w.graph = falkor::graph(&u.graph, name);
                StoreUrl::Falkor(w)
            }
        })
    }

    /// The workspaces beside this index that hold an index, sorted (`default` not
    /// included).
    pub fn workspaces(&self) -> Result<Vec<String>> {
        let mut out = match self {
            StoreUrl::Dir(d) => {
                let root = workspaces_dir(d);
                match std::fs::read_dir(&root) {
                    Ok(rd) => rd
                        .filter_map(|e| e.ok())
                        .filter(|e| e.path().join(DB_FILE).exists())
                        .filter_map(|e| e.file_name().into_string().ok())
                        .filter(|n| check_name(n).is_ok())
                        .collect(),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                    Err(e) => return Err(Error::Store(format!("{}: {e}", root.display()))),
                }
            }
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => pg::list(u)?,
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(u) => falkor::list(u)?,
        };
        out.retain(|n| n != DEFAULT_WORKSPACE);
        out.sort();
        Ok(out)
    }

    /// Make the place of workspace `name` (directory, schema): its index is then created
    /// by the first write, as any index. Idempotent.
    pub fn prepare_workspace(&self, name: &str) -> Result<StoreUrl> {
        let url = self.workspace(name)?;
        #[allow(unreachable_patterns)]
        match (&url, self) {
            (StoreUrl::Dir(d), _) => std::fs::create_dir_all(d)
                .map_err(|e| Error::Store(format!("cannot create the workspace directory {}: {e}", d.display())))?,
            #[cfg(feature = "postgres")]
            (StoreUrl::Postgres(_), StoreUrl::Postgres(base)) => pg::create_schema(base, &pg::schema(name))?,
            _ => {}
        }
        Ok(url)
    }

    /// Delete workspace `name` and everything in it. The caller makes sure nobody uses
    /// it (the server drops its engine first).
    pub fn drop_workspace(&self, name: &str) -> Result<()> {
        if name == DEFAULT_WORKSPACE {
            return Err(Error::bad_input(
                "workspace \"default\"",
                "the main index is not a workspace that can be deleted; delete its documents instead",
            ));
        }
        let url = self.workspace(name)?;
        match (&url, self) {
            (StoreUrl::Dir(d), _) => match std::fs::remove_dir_all(d) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(Error::Store(format!("cannot delete the workspace directory {}: {e}", d.display()))),
            },
            #[cfg(feature = "postgres")]
            (StoreUrl::Postgres(_), StoreUrl::Postgres(base)) => pg::drop_schema(base, &pg::schema(name)),
            #[cfg(feature = "falkordb")]
            (StoreUrl::Falkor(w), _) => falkor::drop_graph(w),
            #[allow(unreachable_patterns)]
            _ => Ok(()),
        }
    }
}

impl StoreUrl {
    /// The URL as `store.url` takes it (with its password: not for messages, see
    /// [`StoreUrl::display`]).
    pub fn to_url(&self) -> String {
        match self {
            StoreUrl::Dir(d) => d.display().to_string(),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(u) => u.clone(),
            #[cfg(feature = "falkordb")]
            StoreUrl::Falkor(u) => {
                let auth = match (&u.user, &u.password) {
                    (Some(user), Some(p)) => format!("{user}:{p}@"),
                    (None, Some(p)) => format!(":{p}@"),
                    _ => String::new(),
                };
                format!("falkordb://{auth}{}:{}/{}", u.host, u.port, u.graph)
            }
        }
    }
}

/// Where a directory index keeps its workspaces.
pub fn workspaces_dir(index: &std::path::Path) -> PathBuf {
    index.join("workspaces")
}

#[cfg(feature = "postgres")]
mod pg {
    use rhizome_core::Result;

    use crate::pg::{pool, PgUrl};

    /// The schema of workspace `name` (names have no `_`, so `-` -> `_` is one to one).
    pub fn schema(name: &str) -> String {
        format!("rz_{}", name.replace('-', "_"))
    }

    /// `url` with the connection's search path set to `schema` (then `public`, where the
    /// vector extension lives), through libpq's `options` parameter.
    pub fn with_schema(url: &str, schema: &str) -> String {
        let opt = format!("options=-c%20search_path%3D{schema}%2Cpublic");
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}{opt}")
    }

    fn run(base: &str, sql: &str) -> Result<()> {
        let url = PgUrl::new(base);
        let mut c = pool::connect(&url)?;
        c.batch_execute(sql).map_err(|e| crate::pg::pg_err(&url, e))
    }

    pub fn create_schema(base: &str, schema: &str) -> Result<()> {
        // The extension is made in `public` first, so that every schema sees its types.
        run(base, &format!("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public; CREATE SCHEMA IF NOT EXISTS {schema}"))
    }

    pub fn drop_schema(base: &str, schema: &str) -> Result<()> {
        run(base, &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
    }

    pub fn list(base: &str) -> Result<Vec<String>> {
        let url = PgUrl::new(base);
        let mut c = pool::connect(&url)?;
        let rows = c
            .query(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rz\\_%' \
                 AND to_regclass(quote_ident(nspname) || '.meta') IS NOT NULL",
                &[],
            )
            .map_err(|e| crate::pg::pg_err(&url, e))?;
        Ok(rows.iter().filter_map(|r| r.get::<_, String>(0).strip_prefix("rz_").map(|n| n.replace('_', "-"))).collect())
    }
}

#[cfg(feature = "falkordb")]
mod falkor {
    use rhizome_core::Result;

    use crate::falkor::reply::Value;
    use crate::FalkorUrl;

    /// The graph of workspace `name` beside graph `base`.
    pub fn graph(base: &str, name: &str) -> String {
        format!("{base}--{name}")
    }

    /// Keys matching `pattern`, by SCAN.
    fn scan(c: &mut crate::falkor::conn::Conn, pattern: &str) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        let mut cursor = b"0".to_vec();
        loop {
            let reply = c.ok(&[b"SCAN", &cursor, b"MATCH", pattern.as_bytes(), b"COUNT", b"1000"])?;
            let Value::Array(parts) = reply else { break };
            let mut parts = parts.into_iter();
            cursor = match parts.next() {
                Some(Value::Bytes(b)) => b,
                _ => break,
            };
            if let Some(Value::Array(keys)) = parts.next() {
                out.extend(keys.into_iter().filter_map(|k| if let Value::Bytes(b) = k { Some(b) } else { None }));
            }
            if cursor == b"0" {
                break;
            }
        }
        Ok(out)
    }

    pub fn list(base: &FalkorUrl) -> Result<Vec<String>> {
        let mut c = base.connect()?;
        let prefix = format!("rhizome:{}--", base.graph);
        let keys = scan(&mut c, &format!("{prefix}*:meta"))?;
        Ok(keys
            .iter()
            .filter_map(|k| std::str::from_utf8(k).ok())
            .filter_map(|k| k.strip_prefix(&prefix)?.strip_suffix(":meta").map(str::to_string))
            .filter(|n| super::check_name(n).is_ok())
            .collect())
    }

    pub fn drop_graph(w: &FalkorUrl) -> Result<()> {
        let mut c = w.connect()?;
        // A graph never written to does not exist: its deletion's error is no error.
        let _ = c.cmd(&[b"GRAPH.DELETE", w.graph.as_bytes()])?;
        for k in scan(&mut c, &format!("rhizome:{}:*", w.graph))? {
            c.ok(&[b"DEL", &k])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["a", "team-a", "0x", "abc-123"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "A", "a_b", "a b", "a/b", "..", &"x".repeat(49)] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains("workspace") && e.contains("team-a"), "{bad}: {e}");
        }
    }

    #[test]
    fn directory_workspaces() {
        let t = tempfile::tempdir().unwrap();
        let base = StoreUrl::Dir(t.path().to_path_buf());
        assert_eq!(base.workspace("default").unwrap(), base);
        let a = base.prepare_workspace("team-a").unwrap();
        assert_eq!(a, StoreUrl::Dir(t.path().join("workspaces/team-a")));
        // A directory without an index is not a workspace yet.
        assert!(base.workspaces().unwrap().is_empty());
        std::fs::write(t.path().join("workspaces/team-a").join(DB_FILE), b"").unwrap();
        assert_eq!(base.workspaces().unwrap(), vec!["team-a".to_string()]);
        base.drop_workspace("team-a").unwrap();
        assert!(base.workspaces().unwrap().is_empty());
        assert!(base.drop_workspace("default").is_err());
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn postgres_search_path() {
        let u = pg::with_schema("postgres://u@h/db", &pg::schema("team-a"));
        assert_eq!(u, "postgres://u@h/db?options=-c%20search_path%3Drz_team_a%2Cpublic");
        let c: postgres::Config = u.parse().unwrap();
        assert_eq!(c.get_options(), Some("-c search_path=rz_team_a,public"));
    }
}
