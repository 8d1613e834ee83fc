SELECT version FROM {{prefix}}_migrations
