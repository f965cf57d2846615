"""paging"""
